"""favorite and contrarian: a fixed stake on (or against) the side the market favours.

``favorite`` asks "does following the crowd's favourite pay after prices?"; ``contrarian`` is
its mirror image, so between them they bracket the simplest price-only strategies.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from agents.sizing import BetBudget, binary_quotes, describe_bets, held_market_ids, outcome_price
from agents.types import AgentView, Decision
from markets.types import NO, YES, SnapshotEntry
from portfolio.actions import Bet
from portfolio.units import MarketId

HALF = Decimal("0.5")


class FractionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fraction: Decimal = Field(Decimal("0.05"), gt=0, le=1, description="stake as a share of cash")
    max_markets: int = Field(3, ge=1, le=100, description="markets bet on per round, by volume")


def _by_volume(entry: SnapshotEntry) -> tuple[bool, Decimal, str]:
    """Highest volume first; markets without a volume last; market id breaks ties."""
    volume = entry.market.volume
    return (volume is None, -(volume or Decimal(0)), entry.market.market_id)


class FavoriteBettor:
    """favorite: each round, on the ``max_markets`` highest-volume binary markets not already held
    whose YES price is not exactly 0.5, bets ``fraction`` of its cash on the side priced above 0.5
    (contrarian: on the side priced below 0.5), clamped to the bet limits and the cash left."""

    uses_peers = False

    def __init__(self, name: str, settings: FractionSettings, *, against: bool = False) -> None:
        self.name = name
        self.settings = settings
        self.against = against

    @property
    def rule(self) -> str:
        return "contrarian" if self.against else "favorite"

    async def decide(self, view: AgentView) -> Decision:
        if not view.prices_visible:
            return Decision(reasoning=f"{self.rule}: prices hidden this round, holds")
        held = held_market_ids(view.portfolio)
        quotes = [
            (e, p) for e, p in binary_quotes(view.snapshot) if p != HALF and e.market.market_id not in held
        ]
        quotes.sort(key=lambda q: _by_volume(q[0]))
        budget = BetBudget.from_view(view)
        bets: list[Bet] = []
        for entry, yes in quotes[: self.settings.max_markets]:
            favourite = YES if yes > HALF else NO
            side = (NO if favourite == YES else YES) if self.against else favourite
            if outcome_price(entry, side) is None:
                continue
            amount = budget.take(self.settings.fraction * view.portfolio.cash)
            if amount is None:
                break
            bets.append(Bet(MarketId(entry.market.market_id), side, amount))
        return Decision(actions=tuple(bets), reasoning=f"{self.rule}: {describe_bets(bets)}")
