"""A plug-in bettor that writes hostile text into every field an agent controls.

Round by round it cycles: a valid bet with hostile reasoning; a bet on a market id it made up
(rejected, so the id lands in the error row); an exception whose message is hostile (an error
row). The tracker URL comes in through the agent's settings, as a user's bot would get them.
"""

from __future__ import annotations

from decimal import Decimal

from agents.types import AgentView, Decision
from portfolio.actions import Bet
from tests.safety.corpus import hostile


class HostileBettor:
    uses_peers = False

    def __init__(self, name: str, tracker: str) -> None:
        self.name = name
        self.texts = hostile(tracker)

    async def decide(self, view: AgentView) -> Decision:
        text = self.texts[view.round_index % len(self.texts)]
        entries = view.snapshot.entries
        if view.round_index % 3 == 2:
            raise RuntimeError(text)
        if view.round_index % 3 == 1 or not entries:
            made_up = f"polymarket:{text[:200]}"
            return Decision(actions=(Bet(made_up, "YES", Decimal(60)),), reasoning=text)
        market = entries[0].market.market_id
        return Decision(
            actions=(Bet(market, "YES", Decimal(60)),), probabilities={market: {"YES": 0.5}}, reasoning=text
        )
