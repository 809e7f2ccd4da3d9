"""Manifold: API v0 client and parsers for binary markets, prices (probability, bets) and resolutions."""
