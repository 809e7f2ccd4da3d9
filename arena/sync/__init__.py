"""Keeping live venues' markets, prices and resolutions current in the database, and recording them.

``run`` is one sync of one venue, ``types`` what it and the venues share, ``write`` its batched
writes; ``polymarket`` and ``manifold`` are the venues' sides of it;
``venues`` composes URLs, HTTP client and venue clients for the CLI and the scheduler.
"""
