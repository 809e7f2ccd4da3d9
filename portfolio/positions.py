"""Positions and the arithmetic of fills, advanced one fill at a time like nautilus' ``Position.apply``.

A position is one agent's holding of one outcome of one market, from the buy that opens it
until a sell closes it or a settlement ends it. Once closed or settled it never reopens: a new
buy of the same outcome opens a new position with a new id (a peer arena added a buy to a
closed row and showed a phantom loss).

The formulas below are the only place a fill's numbers are computed, so the ledger that plans a
fill and the position that applies it (also when replaying a stored log) cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from portfolio.fills import Fill, FillKind
from portfolio.money import ZERO, div, money_down, mul, shares_down, sub
from portfolio.units import MarketId, Money, Price, Shares


class PositionStatus(StrEnum):
    OPEN = "open"
    CLOSED = "closed"  # sold out completely
    SETTLED = "settled"  # paid out (or refunded) when its market resolved


class FillRejected(ValueError):
    """A fill that cannot apply to the current state (wrong agent, closed position, too many shares...)."""


def shares_bought(amount: Money, fee: Money, price: Price) -> Shares:
    """Shares a buy of ``amount`` (fee included) gets at ``price``, truncated to the share grid."""
    return shares_down(div(sub(amount, fee), price))


def gross_proceeds(shares: Shares, price: Price) -> Money:
    """Cash value of selling ``shares`` at ``price`` before fees, truncated to the micro-dollar."""
    return money_down(mul(shares, price))


def basis_released(cost_basis: Money, shares_held: Shares, shares_sold: Shares) -> Money:
    """Cost basis that leaves with ``shares_sold``: the average cost times the shares, all of it on exit."""
    if shares_sold == shares_held:
        return cost_basis
    return money_down(div(mul(cost_basis, shares_sold), shares_held))


def settlement_amount(shares: Shares, payout_per_share: Price) -> Money:
    """What a settlement pays for ``shares`` at ``payout_per_share``, truncated to the micro-dollar."""
    return money_down(mul(shares, payout_per_share))


@dataclass(frozen=True, slots=True)
class Mark:
    """The last real price of a position's side. ``stale``: no fresh price at the latest mark."""

    price: Price
    at: datetime
    stale: bool = False


@dataclass(frozen=True, slots=True)
class Position:
    """An immutable state of one position; ``apply`` returns the next state.

    ``cost_basis`` is what the shares still held cost (fees included), ``realized_pnl`` what
    sells and settlement have realised so far. ``mark`` starts at the buy price and is cleared
    on exit, so a closed position is never valued at an old price.
    """

    position_id: str
    market_id: MarketId
    outcome: str
    shares: Shares
    cost_basis: Money
    realized_pnl: Money
    status: PositionStatus
    opened_at: datetime
    closed_at: datetime | None = None
    mark: Mark | None = None

    @property
    def is_open(self) -> bool:
        return self.status is PositionStatus.OPEN

    @property
    def avg_cost(self) -> Decimal | None:
        """Average cost per share still held (``None`` once nothing is held)."""
        return div(self.cost_basis, self.shares) if self.shares else None

    @classmethod
    def open(cls, fill: Fill) -> Position:
        """The position a BUY fill opens."""
        if fill.kind is not FillKind.BUY:
            raise FillRejected(f"fill {fill.describe()}: position {fill.position_id!r} is not open")
        nothing, none_held = Money(ZERO), Shares(ZERO)
        empty = cls(
            fill.position_id,
            fill.market_id,
            fill.outcome,
            none_held,
            nothing,
            nothing,
            PositionStatus.OPEN,
            fill.at,
        )
        return empty.apply(fill)

    def apply(self, fill: Fill) -> Position:
        """The state after ``fill``; raises ``FillRejected`` (naming the fill) if it cannot apply."""
        problem = self._mismatch(fill) or _arithmetic_problem(fill, self)
        if problem:
            raise FillRejected(f"fill {fill.describe()}: {problem}")
        if fill.kind is FillKind.BUY:
            assert fill.price is not None  # guaranteed by Fill's own checks
            return replace(
                self,
                shares=Shares(self.shares + fill.shares),
                cost_basis=Money(self.cost_basis + fill.amount),
                mark=Mark(fill.price, fill.at),
            )
        shares = Shares(self.shares - fill.shares)
        done = shares == 0 or fill.kind is FillKind.SETTLE
        status = PositionStatus.SETTLED if fill.kind is FillKind.SETTLE else PositionStatus.CLOSED
        return replace(
            self,
            shares=shares,
            cost_basis=Money(self.cost_basis - fill.basis_released),
            realized_pnl=Money(self.realized_pnl + fill.realized_pnl),
            status=status if done else PositionStatus.OPEN,
            closed_at=fill.at if done else None,
            mark=None if done or fill.price is None else Mark(fill.price, fill.at),
        )

    def marked(self, mark: Mark) -> Position:
        """The same position at a new mark. Built field by field: every open position is re-marked
        daily, and ``dataclasses.replace`` is several times slower than the constructor."""
        return Position(
            self.position_id,
            self.market_id,
            self.outcome,
            self.shares,
            self.cost_basis,
            self.realized_pnl,
            self.status,
            self.opened_at,
            self.closed_at,
            mark,
        )

    def _mismatch(self, fill: Fill) -> str | None:
        """Identity and lifecycle problems: wrong position, closed position, too many shares."""
        if (fill.position_id, fill.market_id, fill.outcome) != (
            self.position_id,
            self.market_id,
            self.outcome,
        ):
            return f"belongs to {fill.market_id!r}/{fill.outcome!r}, not to position {self.position_id!r}"
        if not self.is_open:
            return f"position {self.position_id!r} is {self.status.value}"
        if fill.kind is not FillKind.BUY and fill.shares > self.shares:
            return f"moves {fill.shares} shares but the position holds {self.shares}"
        if fill.kind is FillKind.SETTLE and fill.shares != self.shares:
            return f"settles {fill.shares} shares but the position holds {self.shares}"
        return None


def _arithmetic_problem(fill: Fill, held: Position) -> str | None:
    """Whether the fill's numbers follow the accounting rules (so a stored log verifies itself)."""
    if fill.kind is FillKind.BUY:
        assert fill.price is not None
        bought = shares_bought(fill.amount, fill.fee, fill.price)
        return None if fill.shares == bought else f"shares {fill.shares} != {bought} bought"
    released = basis_released(held.cost_basis, held.shares, fill.shares)
    if fill.basis_released != released:
        return f"releases cost basis {fill.basis_released}, expected {released}"
    if fill.kind is FillKind.SELL:
        assert fill.price is not None
        expected = gross_proceeds(fill.shares, fill.price) - fill.fee
        return None if fill.amount == expected else f"amount {fill.amount} != proceeds {expected}"
    expected = held.cost_basis if fill.price is None else settlement_amount(fill.shares, fill.price)
    return None if fill.amount == expected else f"amount {fill.amount} != payout {expected}"
