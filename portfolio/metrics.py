"""Small pure formulas behind the arena's numbers (docs/concepts.md, "Rules of the arena").

The ledger values positions with these, and scoring calls them on stored fills, so a figure on
the dashboard and the same figure in a report come from one definition. All take and return
``Decimal``: money results are exact (``position_value`` is put on the ledger's micro-dollar
grid), ratios use the caller's ``decimal`` context (28 significant digits by default).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Protocol, Self, TypeVar

from portfolio.fills import Fill
from portfolio.money import HUNDRED, ONE, ZERO, money_down, mul

YES = "YES"
NO = "NO"


class Arithmetic(Protocol):
    """What the formula kernels need: ``Decimal`` here, a polars expression in scoring."""

    def __add__(self, other: Self, /) -> Self: ...
    def __sub__(self, other: Self, /) -> Self: ...
    def __mul__(self, other: Self | Decimal, /) -> Self: ...
    def __truediv__(self, other: Self, /) -> Self: ...
    def __rsub__(self, other: int, /) -> Self: ...


N = TypeVar("N", bound=Arithmetic)

# The formula kernels: the one definition of each formula. The ledger's checked ``Decimal``
# functions below call them, and scoring calls them on whole columns (polars expressions), so a
# change here changes the ledger's figures and every leaderboard alike.


def stake_ratio(amount: N, limit: N) -> N:
    """A stake over a limit: ``amount / max_bet`` is the implied confidence, ``amount / cash`` φ."""
    return amount / limit


def complement(probability: N) -> N:
    """``1 − p``: the probability of the other side of a binary market."""
    return 1 - probability


def kelly_probability(price: N, stake_share: N) -> N:
    """``p + φ·(1 − p)``: the belief at which staking ``φ`` of the cash at price ``p`` is full Kelly.

    Kelly's stake on a binary contract bought at ``p`` by someone who believes ``q`` is
    ``f* = (q − p) / (1 − p)``; solving ``φ = f*`` for ``q`` gives this.
    """
    return price + stake_share * complement(price)


def squared_error(forecast: N, outcome: N) -> N:
    """Brier's rule ``(forecast − outcome)²``."""
    error = forecast - outcome
    return error * error


def implied_confidence(amount: Decimal, max_bet: Decimal) -> Decimal:
    """Confidence a bet implies: ``amount / max_bet`` (a max bet is 1.0, i.e. 100%).

    ``max_bet`` is the decision's max bet (from the cash at its start, stored on every BUY fill).
    An amount above it cannot come from a valid decision, so it raises instead of being capped.
    """
    if max_bet <= 0:
        raise ValueError(f"max_bet must be positive, got {max_bet}")
    if not ZERO <= amount <= max_bet:
        raise ValueError(f"amount {amount} is outside [0, max_bet {max_bet}]")
    return stake_ratio(amount, max_bet)


def kelly_implied(price: Decimal, amount: Decimal, cash: Decimal) -> Decimal:
    """P(side) a bet implies read as a full-Kelly stake: ``p + φ·(1 − p)``, ``φ = amount / cash``.

    ``price`` is the side's fill price and ``cash`` the cash at the start of the bet's decision.
    """
    if not ZERO < price < ONE:
        raise ValueError(f"price must lie in (0, 1), got {price}")
    if cash <= 0:
        raise ValueError(f"cash must be positive, got {cash}")
    if not ZERO <= amount <= cash:
        raise ValueError(f"amount {amount} is outside [0, cash {cash}]")
    return kelly_probability(price, stake_ratio(amount, cash))


def f_yes(side: str, confidence: Decimal, *, binary: bool) -> Decimal:
    """The forecast a bet implies, as scored by Brier.

    Binary market: probability of YES, i.e. ``confidence`` for a YES bet, ``1 − confidence`` for
    a NO bet. Multi-outcome market: the probability of the bet's own outcome, ``confidence``.
    """
    if not binary:
        return confidence
    if side == YES:
        return confidence
    if side == NO:
        return complement(confidence)
    raise ValueError(f"a binary bet's side must be {YES!r} or {NO!r}, got {side!r}")


def outcome_indicator(side: str, payouts: Mapping[str, Decimal], *, binary: bool) -> Decimal:
    """What ``f_yes`` is scored against: [YES won] for binary, [that outcome won] otherwise.

    Read from the resolution's payouts per share, so a 50-50 resolution scores against 0.5.
    """
    key = YES if binary else side
    if key not in payouts:
        raise ValueError(f"resolution payouts {dict(payouts)} have no entry for {key!r}")
    return payouts[key]


def brier(forecast: Decimal, outcome: Decimal) -> Decimal:
    """Brier score ``(forecast − outcome)²``: 0 perfect, 0.25 for always 50%, 1 worst."""
    for name, value in (("forecast", forecast), ("outcome", outcome)):
        if not ZERO <= value <= ONE:
            raise ValueError(f"{name} must lie in [0, 1], got {value}")
    return squared_error(forecast, outcome)


def bet_brier(fill: Fill, payouts: Mapping[str, Decimal], *, binary: bool) -> Decimal:
    """Brier of one BUY fill against its market's resolution (callers leave voided markets out)."""
    if fill.max_bet is None:
        raise ValueError(f"fill {fill.describe()} is not a buy: only bets carry a confidence")
    forecast = f_yes(fill.outcome, implied_confidence(fill.amount, fill.max_bet), binary=binary)
    return brier(forecast, outcome_indicator(fill.outcome, payouts, binary=binary))


def bet_won(side: str, payouts: Mapping[str, Decimal], *, void: bool = False) -> bool | None:
    """True if the bet's outcome won (pays $1), False if it lost (pays $0).

    ``None`` when the bet neither won nor lost (void, or a split such as 50-50), so a win rate
    over resolved bets can leave it out.
    """
    if void:
        return None
    payout = payouts.get(side)
    if payout is None:
        raise ValueError(f"resolution payouts {dict(payouts)} have no entry for {side!r}")
    return True if payout == ONE else False if payout == ZERO else None


def position_value(shares: Decimal, price: Decimal) -> Decimal:
    """Value of ``shares`` at ``price`` (the price of their own side), truncated to the micro-dollar."""
    return money_down(mul(shares, price))


def unrealized_pnl(value: Decimal, cost_basis: Decimal) -> Decimal:
    """P/L not yet realised: what the shares held are worth minus what they cost."""
    return value - cost_basis


def realized_pnl(fills: Iterable[Fill]) -> Decimal:
    """P/L realised by sells and settlements (buys realise nothing)."""
    return sum((f.realized_pnl for f in fills), ZERO)


def portfolio_value(cash: Decimal, position_values: Iterable[Decimal]) -> Decimal:
    """Cash plus the value of every open position."""
    return cash + sum(position_values, ZERO)


def pnl(total_value: N, bankroll: N) -> N:
    """Profit or loss since the start: value minus the initial bankroll."""
    return total_value - bankroll


def return_pct(total_value: N, bankroll: N) -> N:
    """Return in percent of the initial bankroll."""
    return pnl(total_value, bankroll) * HUNDRED / bankroll
