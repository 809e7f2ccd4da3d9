"""Shared pricing and bet-sizing helpers for the rule-based bettors.

Every bettor here must only emit actions ``portfolio.validation.check_actions`` accepts: amounts
in whole cents within [min bet, max bet], bets of one decision together within the cash at its
start, one bet per outcome, and only on outcomes whose price is tradable (strictly inside (0, 1)).
Keeping those rules in one place (``BetBudget`` and the price readers) means each baseline states
its idea, not the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from pydantic import BaseModel, ConfigDict, Field

from agents.types import AgentView, PortfolioView
from markets.types import NO, YES, MarketSnapshot, SnapshotEntry
from portfolio.actions import Bet
from portfolio.money import is_tradable_price
from portfolio.units import MarketId, Money

CENT = Decimal("0.01")


def cents_down(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_FLOOR)


def cents_up(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_CEILING)


def yes_price(entry: SnapshotEntry) -> Decimal | None:
    """The YES price of a binary market when it is valid for betting, else None."""
    return outcome_price(entry, YES) if entry.market.is_binary else None


def outcome_price(entry: SnapshotEntry, outcome: str) -> Decimal | None:
    """Price of buying ``outcome`` when it is valid for betting, else None.

    The snapshot's own price for the outcome is what the arena fills at; a YES/NO market quoted
    with YES only costs 1 − YES for NO (docs/concepts.md, "Rules of the arena").
    """
    if outcome not in entry.market.outcomes:
        return None
    prices = entry.price.prices
    price = prices.get(outcome)
    if price is None and entry.market.is_binary and outcome == NO and (yes := prices.get(YES)) is not None:
        price = Decimal(1) - yes
    return price if is_tradable_price(price) else None


def binary_quotes(snapshot: MarketSnapshot) -> list[tuple[SnapshotEntry, Decimal]]:
    """Binary markets with a valid YES price, in market-id order so decisions are reproducible."""
    quotes = [(e, p) for e in snapshot.entries if (p := yes_price(e)) is not None]
    return sorted(quotes, key=lambda q: q[0].market.market_id)


def held_market_ids(portfolio: PortfolioView) -> set[str]:
    return {p.market_id for p in portfolio.positions}


@dataclass(slots=True)
class BetBudget:
    """What is left to bet in one decision: the per-bet limits and the cash not yet committed."""

    low: Decimal
    high: Decimal
    remaining: Decimal

    @classmethod
    def from_view(cls, view: AgentView) -> BetBudget:
        """Limits from the rules and the cash at the start of the decision, rounded inwards to cents."""
        cash = view.portfolio.cash
        return cls(cents_up(view.rules.min_bet), cents_down(view.rules.max_bet(cash)), cash)

    def bounds(self) -> tuple[Decimal, Decimal] | None:
        """The smallest and largest bet still allowed, or None when no bet fits."""
        ceiling = min(self.high, cents_down(self.remaining))
        return (self.low, ceiling) if self.low <= ceiling else None

    def take(self, wanted: Decimal) -> Money | None:
        """Clamp ``wanted`` into the allowed range and commit it; None when no bet fits any more."""
        bounds = self.bounds()
        if bounds is None:
            return None
        low, high = bounds
        amount = Money(min(max(cents_down(wanted), low), high))
        self.remaining -= amount
        return amount


def describe_bets(bets: Sequence[Bet]) -> str:
    """One line listing the bets, for a decision's reasoning."""
    return "; ".join(f"{b.outcome} ${b.amount} on {b.market_id}" for b in bets) or "no bet"


def full_kelly(probability: Decimal, price: Decimal) -> Decimal:
    """Full-Kelly share of bankroll for buying at ``price`` an outcome believed ``probability`` likely.

    A share costs ``price`` and pays 1, so net odds are (1 − price) / price and Kelly's
    f* = (p − price) / (1 − price); it is ≤ 0 when there is no edge.
    """
    return (probability - price) / (Decimal(1) - price)


class KellySizing(BaseModel):
    """Settings shared by the Kelly bettors: how much of full Kelly to bet and where."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kelly_fraction: Decimal = Field(Decimal("0.25"), gt=0, le=1, description="share of full Kelly bet")
    edge_threshold: Decimal = Field(Decimal("0.05"), ge=0, lt=1, description="bet only above this edge")
    max_markets: int = Field(5, ge=1, le=100, description="markets bet on per round, largest edge first")


def kelly_bets(
    view: AgentView, beliefs: Mapping[str, Decimal], sizing: KellySizing
) -> tuple[tuple[Bet, ...], list[str]]:
    """Fractional-Kelly bets against the market on binary markets where the edge beats the threshold.

    ``beliefs`` maps market id -> probability of YES. Markets already held are skipped so a
    standing belief does not pile into the same market every round. The largest edges are
    funded first; amounts are clamped to the bet limits and the remaining cash. Returns the bets
    and one human-readable note per bet.
    """
    held = held_market_ids(view.portfolio)
    candidates: list[tuple[Decimal, str, str, Decimal, Decimal]] = []
    for entry, yes in binary_quotes(view.snapshot):
        market_id = entry.market.market_id
        belief = beliefs.get(market_id)
        if belief is None or market_id in held:
            continue
        side, prob = (YES, belief) if belief > yes else (NO, Decimal(1) - belief)
        price = outcome_price(entry, side)
        if price is not None and prob - price > sizing.edge_threshold:
            candidates.append((prob - price, market_id, side, price, prob))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    budget = BetBudget.from_view(view)
    bets: list[Bet] = []
    notes: list[str] = []
    for edge, market_id, side, price, prob in candidates[: sizing.max_markets]:
        wanted = sizing.kelly_fraction * full_kelly(prob, price) * view.portfolio.cash
        amount = budget.take(wanted)
        if amount is None:
            break
        bets.append(Bet(MarketId(market_id), side, amount))
        notes.append(f"{side} ${amount} on {market_id} at {price} (p={prob:.3f}, edge {edge:.3f})")
    return tuple(bets), notes
