"""Marking positions to market and summing a portfolio's value, without ever inventing a price.

A position is valued at shares × the price of its own side. When a mark has no price for it,
the last real price is carried forward and flagged stale; a position that was never priced is
valued at cost (also stale). A missing price is never read as 0.5 or 0 (a peer arena did both).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from types import MappingProxyType

from portfolio import metrics
from portfolio.money import ZERO, exact, is_mark_price
from portfolio.positions import Mark, Position
from portfolio.units import MarketId, Money, Price, Shares

Prices = Mapping[MarketId, Mapping[str, Price]]
"""market_id -> outcome -> price of that outcome, in [0, 1]."""

_NO_PRICES: Mapping[str, Price] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class PositionValue:
    """One open position at a valuation. ``price`` is ``None`` only when valued at cost."""

    position_id: str
    market_id: MarketId
    outcome: str
    shares: Shares
    cost_basis: Money
    price: Price | None
    marked_at: datetime | None
    value: Money
    unrealized_pnl: Money
    stale: bool


@dataclass(frozen=True, slots=True)
class Valuation:
    """A portfolio at time ``at``: ``total_value == cash + positions_value`` and
    ``total_value - bankroll == realized_pnl + unrealized_pnl``, exactly."""

    at: datetime
    bankroll: Money
    cash: Money
    positions_value: Money
    total_value: Money
    realized_pnl: Money
    unrealized_pnl: Money
    stale_count: int
    open_positions: tuple[Position, ...]

    @property
    @exact
    def positions(self) -> tuple[PositionValue, ...]:
        """Each open position valued at its mark, built when read: a replay values every
        portfolio every day and most of those valuations need only the totals."""
        return tuple(value_position(p) for p in self.open_positions)

    @property
    def pnl(self) -> Money:
        return Money(metrics.pnl(Decimal(self.total_value), Decimal(self.bankroll)))

    @property
    def return_pct(self) -> Decimal:
        return metrics.return_pct(Decimal(self.total_value), Decimal(self.bankroll))


def remark(position: Position, prices: Prices, at: datetime) -> Position:
    """The position with its mark brought to ``at``: a fresh price, or the last one flagged stale.

    A mark older than the position's own (e.g. a fill after the prices were taken) changes
    nothing: the newer price stands. A price outside [0, 1] is bad data and raises.
    """
    if position.mark is not None and at < position.mark.at:
        return position
    price = prices.get(position.market_id, _NO_PRICES).get(position.outcome)
    if price is None:
        if position.mark is None or position.mark.stale:
            return position
        return position.marked(Mark(position.mark.price, position.mark.at, stale=True))
    if not is_mark_price(price):
        raise ValueError(
            f"mark price for {position.outcome!r} of {position.market_id!r} must be a Decimal in [0, 1], "
            f"got {price!r}"
        )
    return position.marked(Mark(price, at))


def worth(position: Position) -> Money:
    """What an open position is worth: shares at its mark, or its cost if it has none."""
    mark = position.mark
    return position.cost_basis if mark is None else Money(metrics.position_value(position.shares, mark.price))


def value_position(position: Position) -> PositionValue:
    """An open position valued at its mark, or at cost if it has none."""
    mark = position.mark
    value = worth(position)
    return PositionValue(
        position_id=position.position_id,
        market_id=position.market_id,
        outcome=position.outcome,
        shares=position.shares,
        cost_basis=position.cost_basis,
        price=None if mark is None else mark.price,
        marked_at=None if mark is None else mark.at,
        value=value,
        unrealized_pnl=Money(metrics.unrealized_pnl(value, position.cost_basis)),
        stale=mark is None or mark.stale,
    )


def valuation(
    *,
    at: datetime,
    bankroll: Money,
    cash: Money,
    open_positions: Iterable[Position],
    realized_pnl: Money,
) -> Valuation:
    """Sum a portfolio from its cash and open positions (closed ones are worth nothing more)."""
    held = tuple(open_positions)
    values = [worth(p) for p in held]
    positions_value = Money(sum(values, ZERO))
    return Valuation(
        at=at,
        bankroll=bankroll,
        cash=cash,
        positions_value=positions_value,
        total_value=Money(metrics.portfolio_value(cash, values)),
        realized_pnl=realized_pnl,
        unrealized_pnl=Money(
            sum((metrics.unrealized_pnl(v, p.cost_basis) for v, p in zip(values, held, strict=True)), ZERO)
        ),
        stale_count=sum(1 for p in held if p.mark is None or p.mark.stale),
        open_positions=held,
    )
