"""random: seeded random bets within the rules, the "no skill at all" reference.

There is no random state kept between rounds: each round's generator is derived from the cohort
seed, the agent name and the round index, so re-running a round (after a crash, or in a second
process) gives exactly the same decision, and two random agents in one cohort differ.
"""

from __future__ import annotations

import hashlib
import random
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from agents.sizing import CENT, BetBudget, describe_bets, outcome_price
from agents.types import AgentView, Decision
from portfolio.actions import Bet
from portfolio.units import MarketId


class RandomSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_bets: int = Field(2, ge=0, le=50, description="markets bet on per round (fewer if fewer priced)")


def round_rng(seed: int, name: str, round_index: int) -> random.Random:
    """A generator that depends only on (cohort seed, agent name, round index)."""
    digest = hashlib.sha256(f"{seed}\x1f{name}\x1f{round_index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class RandomBettor:
    """random: each round bets on up to ``max_bets`` random priced markets, a random outcome each,
    a uniformly random amount in whole cents between the minimum and the maximum bet."""

    uses_peers = False

    def __init__(self, name: str, settings: RandomSettings, *, seed: int) -> None:
        self.name = name
        self.settings = settings
        self.seed = seed

    async def decide(self, view: AgentView) -> Decision:
        if not view.prices_visible:
            return Decision(reasoning="random: prices hidden this round, holds")
        rng = round_rng(self.seed, self.name, view.round_index)
        priced: dict[str, list[str]] = {}
        for entry in sorted(view.snapshot.entries, key=lambda e: e.market.market_id):
            outcomes = [o for o in entry.market.outcomes if outcome_price(entry, o) is not None]
            if outcomes:
                priced[entry.market.market_id] = outcomes
        picked = rng.sample(sorted(priced), k=min(self.settings.max_bets, len(priced)))
        budget = BetBudget.from_view(view)
        bets: list[Bet] = []
        for market_id in picked:
            bounds = budget.bounds()
            if bounds is None:
                break
            low, high = bounds
            cents = rng.randint(int(low / CENT), int(high / CENT))
            amount = budget.take(Decimal(cents) * CENT)
            if amount is None:
                break
            bets.append(Bet(MarketId(market_id), rng.choice(priced[market_id]), amount))
        return Decision(actions=tuple(bets), reasoning=f"random: {describe_bets(bets)}")
