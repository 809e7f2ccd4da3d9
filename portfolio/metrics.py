"""Small pure formulas behind the arena's numbers (DESIGN.md, "Rules of the arena").

The ledger values positions with these, and scoring calls them on stored fills, so a figure on
the dashboard and the same figure in a report come from one definition. All take and return
``Decimal``: money results are exact (``position_value`` is put on the ledger's micro-dollar
grid), ratios use the caller's ``decimal`` context (28 significant digits by default).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal

from portfolio.fills import Fill
from portfolio.money import HUNDRED, ONE, ZERO, money_down, mul

YES = "YES"
NO = "NO"


def implied_confidence(amount: Decimal, max_bet: Decimal) -> Decimal:
    """Confidence a bet implies: ``amount / max_bet`` (a max bet is 1.0, i.e. 100%).

    ``max_bet`` is the decision's max bet (from the cash at its start, stored on every BUY fill).
    An amount above it cannot come from a valid decision, so it raises instead of being capped.
    """
    if max_bet <= 0:
        raise ValueError(f"max_bet must be positive, got {max_bet}")
    if not ZERO <= amount <= max_bet:
        raise ValueError(f"amount {amount} is outside [0, max_bet {max_bet}]")
    return amount / max_bet


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
        return ONE - confidence
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
    return (forecast - outcome) ** 2


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


def pnl(total_value: Decimal, bankroll: Decimal) -> Decimal:
    """Profit or loss since the start: value minus the initial bankroll."""
    return total_value - bankroll


def return_pct(total_value: Decimal, bankroll: Decimal) -> Decimal:
    """Return in percent of the initial bankroll."""
    return pnl(total_value, bankroll) * HUNDRED / bankroll
