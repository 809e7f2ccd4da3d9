"""Settling a resolved market: every open position in it is paid out and ends.

Winners are paid $1 per share and losers $0, a 50-50 resolution $0.50 per share (any payout
per share in [0, 1] is accepted, as the resolution states it); a voided market refunds each
position's remaining cost basis, so its realised P/L on the remaining shares is zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from portfolio.fills import Fill, FillKind
from portfolio.money import ZERO, is_mark_price
from portfolio.positions import Position, settlement_amount
from portfolio.units import AgentId, MarketId, Money, Price


class SettlementRejected(ValueError):
    """A resolution the ledger cannot apply (a held outcome without a valid payout): bad data, which
    the arena defers and reports; any other error out of a settlement is a bug and propagates."""


def settlement_fills(
    positions: Iterable[Position],
    *,
    agent_id: AgentId,
    market_id: MarketId,
    payouts: Mapping[str, Price],
    at: datetime,
    void: bool,
) -> list[Fill]:
    """The SETTLE fills for the open ``positions`` of ``market_id``.

    Raises (before producing any fill) when a held outcome has no valid payout.
    """
    held = [p for p in positions if p.is_open and p.market_id == market_id]
    return [
        _settle_one(p, leg, agent_id=agent_id, payout=None if void else _payout(p, payouts), at=at)
        for leg, p in enumerate(held)
    ]


def _payout(position: Position, payouts: Mapping[str, Price]) -> Price:
    payout = payouts.get(position.outcome)
    if payout is None or not is_mark_price(payout):
        raise SettlementRejected(
            f"settling {position.market_id!r}: payout for outcome {position.outcome!r} must be a Decimal "
            f"in [0, 1], got {payout!r} (payouts: {dict(payouts)})"
        )
    return payout


def _settle_one(
    position: Position, leg: int, *, agent_id: AgentId, payout: Price | None, at: datetime
) -> Fill:
    """``payout`` per share, or ``None`` for a void refund of the remaining cost basis."""
    amount = position.cost_basis if payout is None else settlement_amount(position.shares, payout)
    return Fill(
        decision_id=None,
        leg_index=leg,
        agent_id=agent_id,
        market_id=position.market_id,
        outcome=position.outcome,
        position_id=position.position_id,
        kind=FillKind.SETTLE,
        amount=amount,
        price=payout,
        shares=position.shares,
        fee=Money(ZERO),
        realized_pnl=Money(amount - position.cost_basis),
        max_bet=None,
        at=at,
    )
