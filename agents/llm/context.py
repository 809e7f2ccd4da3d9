"""What a model's answer is checked against: the markets it was offered and its own portfolio.

The rules themselves live in ``portfolio.validation.check_actions`` (the same function the
ledger runs); this module only builds its inputs from the view, so that an answer the LLM
bettor accepts is one the ledger accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from agents.types import AgentView
from markets.types import SnapshotEntry
from portfolio.quotes import MidQuotes, Quotes, Side, zero_fee
from portfolio.rules import Rules
from portfolio.units import MarketId, Money, Price, outcome_prices
from portfolio.validation import OpenPositions


@dataclass(frozen=True, slots=True)
class OutputContext:
    """Markets open to this answer (listed, or held and still trading), positions, cash and rules."""

    outcomes: Mapping[MarketId, tuple[str, ...]]
    quotes: Quotes
    positions: OpenPositions
    cash: Money
    rules: Rules

    @classmethod
    def for_view(cls, view: AgentView, listed: Sequence[SnapshotEntry]) -> OutputContext:
        by_id = view.snapshot.by_id()
        held = [
            by_id[p.market_id] for p in view.portfolio.positions if p.market_id in by_id and p.market_open
        ]
        tradable = {MarketId(e.market.market_id): e for e in (*listed, *held)}
        outcomes = {market_id: e.market.outcomes for market_id, e in tradable.items()}
        quotes: Quotes
        if view.prices_visible:
            # The snapshot's own price per outcome, as the ledger's mid fill model quotes it.
            prices = {market_id: outcome_prices(e.price.prices) for market_id, e in tradable.items()}
            quotes = MidQuotes(prices, outcomes=outcomes)
        else:
            quotes = UnseenPrices(outcomes)
        positions = {
            p.position_id: (p.market_id, p.outcome, p.shares)
            for p in view.portfolio.positions
            if p.shares > 0
        }
        return cls(outcomes, quotes, positions, view.portfolio.cash, view.rules)


class UnseenPrices:
    """Quotes for a round in which the agent is not shown prices (and is not given them).

    Without prices the agent cannot check the price-dependent rules (a price strictly inside
    (0, 1), a fee that leaves shares to buy). Every listed outcome answers a nominal tradable
    price so that ``check_actions`` still checks everything else: markets, outcomes, amounts,
    cash, positions, repeats. The nominal price is used for nothing else; the ledger checks the
    legs again at the real prices before any fill.
    """

    _NOMINAL = Price(Decimal("0.5"))

    def __init__(self, outcomes: Mapping[MarketId, Sequence[str]]) -> None:
        self._outcomes = outcomes

    def outcomes(self, market_id: MarketId) -> Sequence[str] | None:
        return self._outcomes.get(market_id)

    def price(self, market_id: MarketId, outcome: str, side: Side) -> Price | None:
        return self._NOMINAL if outcome in self._outcomes.get(market_id, ()) else None

    def fee(self, market_id: MarketId, outcome: str, side: Side, notional: Money, price: Price) -> Money:
        return zero_fee(market_id, outcome, side, notional, price)
