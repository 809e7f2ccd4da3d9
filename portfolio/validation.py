"""Checking a decision's legs against the rules, as a pure function anyone can call.

The ledger refuses a decision when ``check_actions`` finds anything, and agents call the same
function on their own output (the LLM bettor retries with the reasons), so an agent can never be
told "valid" by one and "invalid" by the other. Reasons name the leg (1-based, as a person
counts) and say what was expected; nothing is ever coerced into a valid decision.

A market the venue closed (``closed_markets``) is not traded: a bet on it or a sell of a position
in it is refused with its close time, and its positions wait for the settlement.

Funding rule: the bets of one decision together must not exceed the cash at the *start* of the
decision. Sells in the same decision do not fund its bets (their proceeds arrive afterwards),
so the order of legs never matters.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from portfolio.actions import Action, Bet, Sell
from portfolio.execution import bet_amount, shares_to_sell, trade_fee
from portfolio.money import (
    HUNDRED,
    MONEY_LIMIT,
    ZERO,
    exact,
    fmt_money,
    is_decimal,
    is_tradable_price,
    money_down,
)
from portfolio.positions import gross_proceeds, shares_bought
from portfolio.quotes import Quotes, Side
from portfolio.rules import Rules
from portfolio.units import MarketId, Money, Shares

OpenPositions = Mapping[str, tuple[MarketId, str, Shares]]
"""position_id -> (market_id, outcome, shares) of the agent's open positions."""


@dataclass(frozen=True, slots=True)
class LegError:
    """Why leg ``leg`` (0-based index into the actions) is refused; ``reason`` names it 1-based."""

    leg: int
    reason: str

    def __str__(self) -> str:
        return self.reason


def decision_max_bet(rules: Rules, cash: Money) -> Money:
    """The max bet of a decision starting with ``cash``, on the micro-dollar grid (never above the rule)."""
    return money_down(rules.max_bet(cash))


@exact
def check_actions(
    actions: Sequence[Action],
    *,
    cash: Money,
    rules: Rules,
    quotes: Quotes,
    positions: OpenPositions,
    settled_markets: Collection[MarketId] = (),
    closed_markets: Mapping[MarketId, datetime] | None = None,
) -> list[LegError]:
    """Every problem of every leg, in leg order; an empty list means the decision may execute.

    ``cash`` is the cash at the start of the decision; ``settled_markets`` are markets the
    agent's ledger has already settled (no new bets there); ``closed_markets`` are markets closed
    for trading, with their close time (no bets and no sells there).
    """
    checker = _Checker(cash, rules, quotes, positions, settled_markets, closed_markets or {})
    errors: list[LegError] = []
    for leg, action in enumerate(actions):
        errors += [LegError(leg, f"{_describe(leg, action)}: {p}") for p in checker.problems(leg, action)]
    return errors


def _describe(leg: int, action: object) -> str:
    if isinstance(action, Bet):
        amount = fmt_money(Decimal(action.amount)) if is_decimal(action.amount) else repr(action.amount)
        return f"leg {leg + 1} (bet {amount} on {action.outcome!r} of {action.market_id!r})"
    if isinstance(action, Sell):
        return f"leg {leg + 1} (sell {action.percent}% of position {action.position_id!r})"
    return f"leg {leg + 1} ({action!r:.80})"


class _Checker:
    """Walks the legs once, remembering what earlier legs bet on, sold and spent."""

    def __init__(
        self,
        cash: Money,
        rules: Rules,
        quotes: Quotes,
        positions: OpenPositions,
        settled_markets: Collection[MarketId],
        closed_markets: Mapping[MarketId, datetime],
    ) -> None:
        self.cash = cash
        self.closed = closed_markets
        self.rules = rules
        self.max_bet = decision_max_bet(rules, cash)
        self.quotes = quotes
        self.positions = positions
        self.settled = settled_markets
        self.spent = ZERO
        self.bets: dict[tuple[str, str], int] = {}  # (market, outcome) -> leg
        self.sells: dict[str, int] = {}  # position id -> leg
        self.sold: dict[tuple[str, str], int] = {}  # (market, outcome) -> leg

    def problems(self, leg: int, action: object) -> list[str]:
        if isinstance(action, Bet):
            return self._bet(leg, action)
        if isinstance(action, Sell):
            return self._sell(leg, action)
        return [f"is a {type(action).__name__}, expected a Bet or a Sell"]

    def _bet(self, leg: int, bet: Bet) -> list[str]:
        target = (bet.market_id, bet.outcome)
        found = [self._bet_target(bet), self._bet_amount(bet), self._repeat(target, leg)]
        if not found[0] and not found[1]:
            found.append(self._buys_nothing(bet))
        self.bets.setdefault(target, leg)
        return [p for p in found if p]

    def _sell(self, leg: int, sell: Sell) -> list[str]:
        held = self.positions.get(sell.position_id)
        if held is None:
            return [
                f"position {sell.position_id!r} is not an open position of this agent (unknown or closed)"
            ]
        market_id, outcome, shares = held
        found = [
            self._sell_percent(sell),
            self._repeat((market_id, outcome), leg, position_id=sell.position_id),
            self._closed(market_id),
        ]
        if not found[0] and not found[2]:
            found.append(self._sell_price(market_id, outcome, shares_to_sell(shares, sell.percent)))
        self.sells.setdefault(sell.position_id, leg)
        self.sold.setdefault((market_id, outcome), leg)
        return [p for p in found if p]

    def _bet_target(self, bet: Bet) -> str | None:
        """Market, outcome and price: the first thing wrong with what the bet is on."""
        closed = self._closed(bet.market_id)
        if closed:
            return closed
        outcomes = self.quotes.outcomes(bet.market_id)
        if outcomes is None:
            return f"unknown market {bet.market_id!r} (not among the markets open for betting)"
        if bet.outcome not in outcomes:
            return f"{bet.outcome!r} is not an outcome of {bet.market_id!r}; expected one of {list(outcomes)}"
        if bet.market_id in self.settled:
            return f"market {bet.market_id!r} has already been settled"
        return _price_problem(
            self.quotes.price(bet.market_id, bet.outcome, Side.BUY), bet.market_id, bet.outcome
        )

    def _closed(self, market_id: object) -> str | None:
        closed_at = self.closed.get(MarketId(market_id)) if isinstance(market_id, str) else None
        if closed_at is None:
            return None
        return (
            f"market {market_id!r} closed at {closed_at.isoformat()}: a closed market is not traded "
            "(its positions wait for the settlement)"
        )

    def _bet_amount(self, bet: Bet) -> str | None:
        """Size limits and funding; only a well-formed amount counts towards the decision's total."""
        if not is_decimal(bet.amount):
            return f"amount must be a finite decimal number of dollars, got {bet.amount!r}"
        if abs(bet.amount) >= MONEY_LIMIT:  # past it, rounding to the micro-dollar would overflow
            return f"amount {fmt_money(Decimal(bet.amount))} is out of range (below {fmt_money(MONEY_LIMIT)})"
        amount = bet_amount(bet)
        if amount < self.rules.min_bet:
            return f"amount {fmt_money(amount)} is below the minimum bet {fmt_money(self.rules.min_bet)}"
        if amount > self.max_bet:
            share = f"{(self.rules.max_bet_fraction * HUNDRED).normalize():f}% of cash {fmt_money(self.cash)}"
            return f"amount {fmt_money(amount)} is above the maximum bet {fmt_money(self.max_bet)} ({share})"
        self.spent += amount
        if self.spent > self.cash:
            return (
                f"bets up to this leg total {fmt_money(self.spent)}, more than the cash "
                f"{fmt_money(self.cash)} at the start of the decision "
                "(sells do not fund bets in the same decision)"
            )
        return None

    def _buys_nothing(self, bet: Bet) -> str | None:
        """Only a fee model can make a valid-looking bet buy nothing; say so rather than fill zero shares."""
        price = self.quotes.price(bet.market_id, bet.outcome, Side.BUY)
        if price is None:  # cannot happen: only called once _bet_target found a valid price
            return None
        amount = bet_amount(bet)
        fee = trade_fee(self.quotes, bet.market_id, bet.outcome, Side.BUY, amount, price)
        if fee >= amount or shares_bought(amount, fee, price) == 0:
            return f"a fee of {fmt_money(fee)} at price {price} leaves no shares to buy"
        return None

    def _sell_percent(self, sell: Sell) -> str | None:
        if not is_decimal(sell.percent) or not ZERO < sell.percent <= HUNDRED:
            return f"percent must be a number in (0, 100], got {sell.percent!r}"
        return None

    def _sell_price(self, market_id: MarketId, outcome: str, shares: Shares) -> str | None:
        if self.quotes.outcomes(market_id) is None:
            return f"market {market_id!r} is not open for trading"
        price = self.quotes.price(market_id, outcome, Side.SELL)
        problem = _price_problem(price, market_id, outcome)
        if problem or price is None:
            return problem
        if shares == 0:
            return "sells no shares (the percentage is too small)"
        gross = gross_proceeds(shares, price)
        fee = trade_fee(self.quotes, market_id, outcome, Side.SELL, gross, price)
        return f"a fee of {fmt_money(fee)} exceeds the proceeds {fmt_money(gross)}" if fee > gross else None

    def _repeat(self, target: tuple[str, str], leg: int, *, position_id: str | None = None) -> str | None:
        """Two legs on the same outcome would make the result depend on leg order: refuse."""
        what = f"{target[1]!r} of {target[0]!r}"
        if position_id is not None and position_id in self.sells:
            return f"sells position {position_id!r} again (leg {self.sells[position_id] + 1}); sell once"
        if position_id is None and target in self.bets:
            return f"bets on {what} again (leg {self.bets[target] + 1}); combine them into one bet"
        if position_id is None and target in self.sold:
            return f"bets on {what}, which leg {self.sold[target] + 1} sells; do one or the other"
        if position_id is not None and target in self.bets:
            return f"sells {what}, which leg {self.bets[target] + 1} bets on; do one or the other"
        return None


def _price_problem(price: object, market_id: str, outcome: str) -> str | None:
    """A fill needs a real price strictly inside (0, 1); a missing price is never read as 0.5."""
    if price is None:
        return f"no price for {outcome!r} of {market_id!r}; a trade needs a real price"
    if not is_tradable_price(price):
        return f"price {price!r} of {outcome!r} of {market_id!r} is not a Decimal strictly between 0 and 1"
    return None
