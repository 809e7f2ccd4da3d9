"""Builders shared by the portfolio tests: fixed times, markets and quotes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from portfolio import MidQuotes

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
D = Decimal

BINARY = "polymarket:will-it-rain"
OTHER = "manifold:other-binary"
MULTI = "polymarket:who-wins"


def quotes(yes: str = "0.40", other_yes: str = "0.70") -> MidQuotes:
    """A binary market at ``yes``, a second binary market, and a three-way market."""
    return MidQuotes(
        {
            BINARY: {"YES": D(yes), "NO": 1 - D(yes)},
            OTHER: {"YES": D(other_yes), "NO": 1 - D(other_yes)},
            MULTI: {"Alice": D("0.5"), "Bob": D("0.3"), "Carol": D("0.2")},
        }
    )
