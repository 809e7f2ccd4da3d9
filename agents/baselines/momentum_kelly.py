"""kelly: fractional Kelly against the market, on a deliberately simple price-momentum signal.

It is the "a rule with a stated probability" reference: it states a probability for every
priced binary market (so its calibration can be scored like an LLM's) and sizes bets by Kelly,
so it shows what a mechanical edge-and-size rule earns on the same snapshots.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from pydantic import Field

from agents.sizing import KellySizing, binary_quotes, kelly_bets
from agents.types import AgentView, Decision


class KellySettings(KellySizing):
    lookback_days: int = Field(7, ge=1, le=365, description="momentum is measured over this many days")
    momentum: Decimal = Field(Decimal("1"), ge=-10, le=10, description="k in p = price + k·(price − past)")
    probability_floor: Decimal = Field(
        Decimal("0.01"), gt=0, lt=Decimal("0.5"), description="p is kept in [f, 1−f]"
    )


def price_at(history: Sequence[tuple[datetime, Decimal]], when: datetime) -> Decimal | None:
    """The last recorded price at or before ``when`` (None if the history starts later)."""
    past = [price for at, price in history if at <= when]
    return past[-1] if past else None


def momentum_probability(price: Decimal, past: Decimal | None, settings: KellySettings) -> Decimal:
    """p = clamp(price + k·(price − past), floor, 1 − floor); no past price means no signal: p = price."""
    if past is None:
        return price
    raw = price + settings.momentum * (price - past)
    return min(max(raw, settings.probability_floor), Decimal(1) - settings.probability_floor)


class MomentumKellyBettor:
    """kelly: states p = clamp(price + k·(price − price lookback_days ago)) for every priced binary
    market, and bets kelly_fraction × full Kelly of its cash where |p − price| > edge_threshold
    (largest edges first, at most max_markets, skipping markets already held)."""

    uses_peers = False

    def __init__(self, name: str, settings: KellySettings) -> None:
        self.name = name
        self.settings = settings

    async def decide(self, view: AgentView) -> Decision:
        if not view.prices_visible:
            return Decision(reasoning="kelly: prices hidden this round, holds")
        lag = view.snapshot.as_of - timedelta(days=self.settings.lookback_days)
        beliefs = {
            entry.market.market_id: momentum_probability(price, price_at(entry.history, lag), self.settings)
            for entry, price in binary_quotes(view.snapshot)
        }
        bets, notes = kelly_bets(view, beliefs, self.settings)
        return Decision(
            actions=bets,
            probabilities={m: {"YES": float(p)} for m, p in beliefs.items()},
            reasoning="kelly: " + ("; ".join(notes) or "no edge above the threshold"),
        )
