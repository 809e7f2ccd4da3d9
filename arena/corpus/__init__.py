"""Corpora: dated documents imported from JSONL, searched strictly as of a point in time."""
