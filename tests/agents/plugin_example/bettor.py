"""A minimal user bot: buys YES on every market priced below a threshold, a fixed stake each.

The arena calls ``CheapYesBettor(name=<agent name>, **settings)``; because the constructor has a
``seed`` parameter it also receives the cohort seed (unused here, shown for completeness).
"""

from __future__ import annotations

from decimal import Decimal

from agents.types import AgentView, Decision
from portfolio.actions import Bet


class CheapYesBettor:
    uses_peers = False

    def __init__(self, name: str, threshold: float = 0.3, stake: int = 100, seed: int = 0) -> None:
        self.name = name
        self.threshold = Decimal(str(threshold))
        self.stake = Decimal(stake)
        self.seed = seed

    async def decide(self, view: AgentView) -> Decision:
        bets = []
        budget = view.portfolio.cash
        for entry in view.snapshot.entries:
            price = entry.price.prices.get("YES")
            if price is not None and 0 < price < self.threshold and budget >= self.stake:
                bets.append(Bet(entry.market.market_id, "YES", self.stake))
                budget -= self.stake
        return Decision(actions=tuple(bets), reasoning=f"YES below {self.threshold}")
