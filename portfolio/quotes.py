"""Where the ledger gets prices and fees for a decision: the ``Quotes`` interface.

The ledger never looks prices up itself (it takes them as an argument, like nautilus'
``unrealized_pnl(price)``), so the same engine fills at snapshot mids in a simple cohort and at
ask/bid with taker fees in a realistic one: only the ``Quotes`` object differs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Protocol

from portfolio.units import MarketId, Money, Price


class Side(StrEnum):
    BUY = "buy"  # the agent buys: pays the ask
    SELL = "sell"  # the agent sells: receives the bid


FeeFn = Callable[[MarketId, str, Side, Money, Price], Money]
"""``fee(market_id, outcome, side, notional, price)``: dollars charged on a trade of ``notional``
dollars (the bet amount for a buy, shares × price for a sell). Rounded up to the micro-dollar."""


def zero_fee(market_id: MarketId, outcome: str, side: Side, notional: Money, price: Price) -> Money:
    """The default: trading is free."""
    return Money(Decimal(0))


class Quotes(Protocol):
    """Prices and fees for one decision. ``None`` answers mean "not available": never a guess."""

    def outcomes(self, market_id: MarketId) -> Sequence[str] | None:
        """The market's outcomes, or ``None`` for a market that is unknown (or not open for trading)."""
        ...

    def price(self, market_id: MarketId, outcome: str, side: Side) -> Price | None:
        """Price per share of ``outcome`` for ``side``, or ``None`` when there is no price."""
        ...

    def fee(self, market_id: MarketId, outcome: str, side: Side, notional: Money, price: Price) -> Money:
        """Fee in dollars for a trade of ``notional`` dollars at ``price``."""
        ...


class MidQuotes:
    """One price per outcome for both sides (the mid model), from ``market_id -> {outcome: price}``.

    Outcomes default to the outcomes that have a price; pass ``outcomes`` to declare a market's
    full outcome list, so that a missing price reads as "no price" rather than "no such outcome".
    For a binary market the caller supplies the NO price (1 − YES) if it wants NO bets priced.
    """

    def __init__(
        self,
        prices: Mapping[MarketId, Mapping[str, Price]],
        *,
        outcomes: Mapping[MarketId, Sequence[str]] | None = None,
        fee: FeeFn = zero_fee,
    ) -> None:
        self._prices = prices
        self._outcomes: Mapping[MarketId, Sequence[str]] = outcomes or {
            m: tuple(p) for m, p in prices.items()
        }
        self._fee = fee

    def outcomes(self, market_id: MarketId) -> Sequence[str] | None:
        return self._outcomes.get(market_id)

    def price(self, market_id: MarketId, outcome: str, side: Side) -> Price | None:
        return self._prices.get(market_id, {}).get(outcome)

    def fee(self, market_id: MarketId, outcome: str, side: Side, notional: Money, price: Price) -> Money:
        return self._fee(market_id, outcome, side, notional, price)
