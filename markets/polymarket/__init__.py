"""Polymarket: Gamma (catalog, resolutions) and CLOB (midpoints, books, history) clients and parsers."""
