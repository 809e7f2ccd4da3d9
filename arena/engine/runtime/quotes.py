"""Fill models: the ``portfolio.Quotes`` a decision executes against, built from the round's snapshot.

``mid`` fills every trade at the snapshot's price of the outcome. ``realistic`` buys at the ask
and sells at the bid where the snapshot has a book, charges the venue's taker fee, and refuses a
trade where there is no book (no price is ever made up from the mid). Both only quote markets the
agent may trade this round: the round's universe plus markets where it holds an open position.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from arena.cohorts.config import FillsConfig, TakerFee
from markets.types import Market, PriceSnapshot, Venue
from portfolio import MarketId, MidQuotes, Money, Price, Quotes, Side
from portfolio.money import ZERO, div, money_up, mul
from portfolio.units import outcome_prices


def build_quotes(
    fills: FillsConfig, markets: Iterable[tuple[Market, PriceSnapshot]], *, venue_of: Mapping[str, Venue]
) -> Quotes:
    """Quotes for the given (market, price) pairs under the cohort's fill model."""
    pairs = list(markets)
    outcomes = {MarketId(m.market_id): m.outcomes for m, _ in pairs}
    if fills.model == "mid":
        prices = {MarketId(m.market_id): outcome_prices(p.prices) for m, p in pairs}
        return MidQuotes(prices, outcomes=outcomes)
    return BookQuotes({m.market_id: p for m, p in pairs}, outcomes, fills.taker_fees, venue_of)


class BookQuotes:
    """Ask for buys, bid for sells, taker fee on both; ``None`` where the snapshot has no book."""

    def __init__(
        self,
        books: Mapping[str, PriceSnapshot],
        outcomes: Mapping[MarketId, Sequence[str]],
        fees: Mapping[Venue, TakerFee],
        venue_of: Mapping[str, Venue],
    ) -> None:
        self._books = books
        self._outcomes = outcomes
        self._fees = fees
        self._venue_of = venue_of

    def outcomes(self, market_id: MarketId) -> Sequence[str] | None:
        return self._outcomes.get(market_id)

    def price(self, market_id: MarketId, outcome: str, side: Side) -> Price | None:
        book = self._books.get(market_id)
        if book is None:
            return None
        return outcome_prices(book.asks if side is Side.BUY else book.bids).get(outcome)

    def fee(self, market_id: MarketId, outcome: str, side: Side, notional: Money, price: Price) -> Money:
        venue = self._venue_of.get(market_id)
        schedule = self._fees.get(venue) if venue is not None else None
        return taker_fee(schedule, notional, price)


def taker_fee(schedule: TakerFee | None, notional: Decimal, price: Decimal) -> Money:
    """Polymarket's taker formula ``shares × rate × (p·(1−p))^exponent``, shares = notional / price,
    rounded up to the micro-dollar (fees favour the house, like every rounding in the ledger)."""
    if schedule is None or schedule.rate == 0 or price <= 0:
        return Money(ZERO)
    curve = mul(price, 1 - price) ** schedule.exponent
    # shares = notional / price; dividing last keeps the product exact where it can be
    return money_up(div(mul(mul(notional, schedule.rate), curve), price))
