"""Cohort rules for betting: bankroll and bet-size limits (docs/concepts.md, "Rules of the arena")."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from portfolio.units import Money

DEFAULT_BANKROLL = Money(Decimal("10000"))
DEFAULT_MIN_BET = Money(Decimal("50"))
DEFAULT_MAX_BET_FRACTION = Decimal("0.25")
"""The defaults of a cohort's ``[rules]`` (its config fills them in from here)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """Limits every decision of a cohort is checked against.

    ``max_bet_fraction`` applies to the cash at the *start* of a decision, so all legs of one
    decision share the same maximum (and the same implied-confidence denominator).
    """

    bankroll: Money = DEFAULT_BANKROLL
    min_bet: Money = DEFAULT_MIN_BET
    max_bet_fraction: Decimal = DEFAULT_MAX_BET_FRACTION

    def __post_init__(self) -> None:
        if self.bankroll <= 0:
            raise ValueError(f"rules.bankroll must be positive, got {self.bankroll}")
        if self.min_bet <= 0:
            raise ValueError(f"rules.min_bet must be positive, got {self.min_bet}")
        if not (0 < self.max_bet_fraction <= 1):
            raise ValueError(f"rules.max_bet_fraction must lie in (0, 1], got {self.max_bet_fraction}")

    def max_bet(self, cash_at_start: Decimal) -> Decimal:
        """The largest single bet allowed when a decision starts with ``cash_at_start``."""
        return cash_at_start * self.max_bet_fraction
