"""Bettors that never bet: ``hold`` (the do-nothing reference), ``market`` (the crowd reference)
and ``half`` (the know-nothing forecaster, ForecastBench's Always-0.5).

They exist so every score has a floor to beat: an LLM that loses money did worse than holding,
one whose stated probabilities score worse than ``market``'s did worse than the market price,
and one that scores worse than ``half`` did worse than saying "50%" everywhere.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agents.sizing import outcome_price
from agents.types import AgentView, Decision
from markets.types import YES


class NoSettings(BaseModel):
    """``hold`` and ``market`` take no settings; any key is a typo."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class HoldBettor:
    """hold: never bets and states nothing."""

    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        return Decision(reasoning="hold: never bets")


class MarketBettor:
    """market: states the market price as its probability for every market and never bets.

    Binary markets get ``{"YES": price}``; multi-outcome markets one probability per priced
    outcome. Only valid prices (strictly inside (0, 1)) are stated. With prices hidden it cannot
    see what to state, so it states nothing.
    """

    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        if not view.prices_visible:
            return Decision(reasoning="market: prices hidden this round, nothing to state")
        probabilities: dict[str, dict[str, float]] = {}
        for entry in view.snapshot.entries:
            stated_outcomes = (YES,) if entry.market.is_binary else entry.market.outcomes
            stated = {o: float(p) for o in stated_outcomes if (p := outcome_price(entry, o)) is not None}
            if stated:
                probabilities[entry.market.market_id] = stated
        return Decision(probabilities=probabilities, reasoning="market: states the market price, never bets")


class HalfBettor:
    """half: states 0.5 on every offered binary market (1/n on each outcome of an n-outcome
    market, the same know-nothing forecast) and never bets. It needs no price, so it states the
    same whether prices are shown or hidden."""

    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        probabilities = {
            entry.market.market_id: (
                {YES: 0.5}
                if entry.market.is_binary
                else dict.fromkeys(entry.market.outcomes, 1.0 / len(entry.market.outcomes))
            )
            for entry in view.snapshot.entries
        }
        return Decision(probabilities=probabilities, reasoning="half: states 50% everywhere, never bets")
