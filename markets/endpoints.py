"""The venues' public API base URLs.

Apart from their clients so that ``arena.core.settings``, which every command reads, can name the
defaults without importing the HTTP stack.
"""

from __future__ import annotations

GAMMA_URL = "https://gamma-api.polymarket.com"  # Polymarket's catalog
CLOB_URL = "https://clob.polymarket.com"  # Polymarket's order book
MANIFOLD_URL = "https://api.manifold.markets"
