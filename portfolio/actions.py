"""The two things a bettor can ask the ledger to do.

Actions are plain values so that agents can produce them, the arena can store them as JSON, and
the ledger can validate them without knowing where they came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from portfolio.units import MarketId, Money


@dataclass(frozen=True, slots=True)
class Bet:
    """Spend ``amount`` dollars on ``outcome`` of ``market_id`` at the decision's price."""

    market_id: MarketId
    outcome: str
    amount: Money


@dataclass(frozen=True, slots=True)
class Sell:
    """Sell ``percent`` (0, 100] of the open position ``position_id`` at the decision's price."""

    position_id: str
    percent: Decimal


Action = Bet | Sell
