"""crowd: the ensemble of the other agents' stated probabilities, bet with fractional Kelly.

Ensembles of forecasters usually beat most of their members; this bettor measures whether that
holds in the arena. It runs after the other agents of a round (``uses_peers``) and reads their
stated probabilities from ``AgentView.peer_probabilities``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Literal

from pydantic import Field

from agents.sizing import KellySizing, kelly_bets
from agents.types import AgentView, Decision
from markets.types import NO, YES

AggregationMethod = Literal["median", "mean", "geo_mean", "geo_mean_odds"]

# Geometric mean of odds is undefined at 0 and 1; peers' extreme statements are clipped to
# [ODDS_CLIP, 1 − ODDS_CLIP] for that method, as is usual in forecast aggregation. The geometric
# mean of probabilities is undefined only at 0 (one zero would make the crowd certain of NO):
# statements below ODDS_CLIP are read as ODDS_CLIP for it.
ODDS_CLIP = 0.01


class CrowdSettings(KellySizing):
    method: AggregationMethod = Field("median", description="how peer probabilities are combined")
    min_peers: int = Field(2, ge=1, le=1000, description="peers that must state a market to use it")


def peer_yes_probability(stated: Mapping[str, float]) -> float | None:
    """A peer's P(YES) from what it stated ("YES", else 1 − "NO"); None if absent or not in [0, 1]."""
    value = stated.get(YES)
    if value is None and (no := stated.get(NO)) is not None:
        value = 1.0 - no
    if value is None or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return None
    return value


def aggregate(probabilities: Sequence[float], method: AggregationMethod) -> float:
    """Combine probabilities of YES by median, arithmetic mean, geometric mean, or geometric mean of odds.

    ``geo_mean`` is the geometric mean of the P(YES) values, ``(Π p_i)^(1/n)``, as ForecastBench
    (Karger et al.) compares it. It is not renormalised against the geometric mean of the P(NO)
    values: the two add up to at most 1, so it leans towards NO when peers disagree.
    """
    if method == "median":
        return statistics.median(probabilities)
    if method == "mean":
        return statistics.fmean(probabilities)
    if method == "geo_mean":
        return statistics.geometric_mean(max(p, ODDS_CLIP) for p in probabilities)
    clipped = [min(max(p, ODDS_CLIP), 1.0 - ODDS_CLIP) for p in probabilities]
    mean_log_odds = statistics.fmean(math.log(p / (1.0 - p)) for p in clipped)
    return 1.0 / (1.0 + math.exp(-mean_log_odds))


class CrowdBettor:
    """crowd: states the ``method`` aggregate of other agents' P(YES) on each binary market at least
    ``min_peers`` of them stated (never its own), and bets fractional Kelly on it like ``kelly``."""

    uses_peers = True

    def __init__(self, name: str, settings: CrowdSettings) -> None:
        self.name = name
        self.settings = settings

    def beliefs(self, view: AgentView) -> dict[str, float]:
        """Aggregate P(YES) per binary market of the snapshot with enough peer statements."""
        binary = sorted(e.market.market_id for e in view.snapshot.entries if e.market.is_binary)
        peers = sorted(name for name in view.peer_probabilities if name != self.name)
        beliefs: dict[str, float] = {}
        for market_id in binary:
            stated = [
                p
                for peer in peers
                if (p := peer_yes_probability(view.peer_probabilities[peer].get(market_id, {}))) is not None
            ]
            if len(stated) >= self.settings.min_peers:
                beliefs[market_id] = aggregate(stated, self.settings.method)
        return beliefs

    async def decide(self, view: AgentView) -> Decision:
        beliefs = self.beliefs(view)
        probabilities = {m: {YES: p} for m, p in beliefs.items()}
        summary = f"crowd: {self.settings.method} of peers on {len(beliefs)} markets"
        if not view.prices_visible:
            return Decision(probabilities=probabilities, reasoning=f"{summary}; prices hidden, no bets")
        bets, notes = kelly_bets(view, {m: Decimal(repr(p)) for m, p in beliefs.items()}, self.settings)
        return Decision(
            actions=bets,
            probabilities=probabilities,
            reasoning=f"{summary}; " + ("; ".join(notes) or "no edge above the threshold"),
        )
