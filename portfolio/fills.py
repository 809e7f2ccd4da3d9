"""Fills: the ledger's log. Every change to cash or positions is one ``Fill``.

A ledger is a fold over its fills (``Ledger.from_fills``), so a fill carries everything needed
to replay it without prices, rules or quotes: the cash it moved, the shares, and the P/L it
realised (from which the cost basis it released follows).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from portfolio.money import ZERO, on_money_grid, on_share_grid
from portfolio.units import AgentId, MarketId, Money, Price, Shares


class FillKind(StrEnum):
    BUY = "buy"
    SELL = "sell"
    SETTLE = "settle"


@dataclass(frozen=True, slots=True)
class Fill:
    """One executed leg (BUY/SELL of a decision) or one settled position (SETTLE).

    ``amount`` is the cash moved, never negative; its direction follows ``kind``: a BUY pays it
    (fee included: the fee comes out of the bet), a SELL receives it net of fee, a SETTLE
    receives the payout (or the refund of a voided market). ``price`` is the execution price,
    or the payout per share for a SETTLE, and ``None`` only for a void refund.
    ``realized_pnl`` is zero for a BUY; for a SELL/SETTLE it is ``amount`` minus the cost basis
    released. ``max_bet`` is the decision's max bet (BUY only), the implied-confidence
    denominator. ``decision_id`` is ``None`` for settlements; ``leg_index`` is the 0-based leg
    of the decision, or the position's index within one settlement.
    """

    decision_id: str | None
    leg_index: int
    agent_id: AgentId
    market_id: MarketId
    outcome: str
    position_id: str
    kind: FillKind
    amount: Money
    price: Price | None
    shares: Shares
    fee: Money
    realized_pnl: Money
    max_bet: Money | None
    at: datetime

    def __post_init__(self) -> None:
        problem = _intrinsic_problem(self)
        if problem:
            raise ValueError(f"fill {self.describe()}: {problem}")

    @property
    def cash_delta(self) -> Money:
        """Signed change of the agent's cash."""
        return Money(-self.amount) if self.kind is FillKind.BUY else self.amount

    @property
    def basis_released(self) -> Money:
        """Cost basis a SELL/SETTLE takes off the position (what the realised P/L is measured against)."""
        return Money(ZERO if self.kind is FillKind.BUY else self.amount - self.realized_pnl)

    @property
    def key(self) -> tuple[str, int] | None:
        """Identity of a decision leg (unique per ledger); ``None`` for settlements."""
        return None if self.decision_id is None else (self.decision_id, self.leg_index)

    def describe(self) -> str:
        """Short identification for error messages."""
        origin = "settlement" if self.decision_id is None else f"decision {self.decision_id}"
        return f"{self.kind} {self.position_id!r} ({origin}, leg {self.leg_index})"


def _intrinsic_problem(fill: Fill) -> str | None:
    """What is wrong with a fill on its own (before any ledger state is consulted), if anything."""
    if not isinstance(fill.kind, FillKind):
        return f"kind must be one of {[k.value for k in FillKind]}, got {fill.kind!r}"
    if fill.at.tzinfo is None:
        return "at must be timezone-aware"
    for name in ("amount", "fee", "realized_pnl"):
        if not on_money_grid(getattr(fill, name)):
            return f"{name} must be a finite amount on the 1e-6 grid, got {getattr(fill, name)}"
    if fill.amount < 0 or fill.fee < 0:
        return "amount and fee must not be negative"
    if not on_share_grid(fill.shares) or fill.shares < 0:
        return f"shares must be a positive count on the 1e-6 grid, got {fill.shares}"
    if fill.shares == 0:
        return "a fill must move shares"
    return _kind_problem(fill)


def _kind_problem(fill: Fill) -> str | None:
    """What is wrong with a fill for its kind: price, realised P/L, max_bet and decision."""
    if fill.price is None and fill.kind is not FillKind.SETTLE:
        return "only a void settlement may have no price"
    if fill.kind is FillKind.BUY and (fill.realized_pnl != 0 or fill.max_bet is None):
        return "a buy realises no P/L and must carry its decision's max_bet"
    if fill.kind is FillKind.SETTLE and fill.decision_id is not None:
        return "a settlement belongs to no decision"
    return None
