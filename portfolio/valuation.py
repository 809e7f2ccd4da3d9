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


class FreshMarks:
    """The marks ``prices`` give at ``at``, each built (and its price checked) once, on first
    use, and shared by every position marked with them: a replay re-marks every open position of
    every agent each day, and the agents hold many of the same markets."""

    __slots__ = ("_made", "_prices", "at")

    def __init__(self, prices: Prices, at: datetime) -> None:
        self.at = at
        self._prices = prices
        self._made: dict[tuple[MarketId, str], Mark | None] = {}

    def get(self, market_id: MarketId, outcome: str) -> Mark | None:
        """The fresh mark of ``outcome`` of ``market_id``; ``None`` without a price. A price
        outside [0, 1] is bad data and raises."""
        key = (market_id, outcome)
        try:
            return self._made[key]
        except KeyError:
            pass
        price = self._prices.get(market_id, _NO_PRICES).get(outcome)
        if price is not None and not is_mark_price(price):
            raise ValueError(
                f"mark price for {outcome!r} of {market_id!r} must be a Decimal in [0, 1], got {price!r}"
            )
        mark = self._made[key] = None if price is None else Mark(price, self.at)
        return mark


def remark(position: Position, marks: FreshMarks) -> Position:
    """The position with its mark brought to ``marks.at``: a fresh price, or the last one flagged
    stale.

    A mark older than the position's own (e.g. a fill after the prices were taken) changes
    nothing: the newer price stands. A position already at the very mark (a round marks at the
    instant of the day's mark) is returned as it is.
    """
    mark = position.mark
    if mark is not None and marks.at < mark.at:
        return position
    fresh = marks.get(position.market_id, position.outcome)
    if fresh is None:
        if mark is None or mark.stale:
            return position
        return position.marked(Mark(mark.price, mark.at, stale=True))
    if mark is not None and mark.price is fresh.price and mark.at == fresh.at and not mark.stale:
        return position
    return position.marked(fresh)


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
    values, unrealized, stale = [], ZERO, 0
    for p in held:  # one pass: a replay values every portfolio every day
        value = worth(p)
        values.append(value)
        unrealized += metrics.unrealized_pnl(value, p.cost_basis)
        stale += p.mark is None or p.mark.stale
    return Valuation(
        at=at,
        bankroll=bankroll,
        cash=cash,
        positions_value=Money(sum(values, ZERO)),
        total_value=Money(metrics.portfolio_value(cash, values)),
        realized_pnl=realized_pnl,
        unrealized_pnl=Money(unrealized),
        stale_count=stale,
        open_positions=held,
    )
