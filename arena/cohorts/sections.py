"""Cohort config sections that hold a handful of settings each: marks, price ages, scoring,
research tools and the budget (the larger sections stay beside ``CohortConfig``)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field, PlainSerializer

from arena.core.config_types import MAX_AMOUNT, Duration, Strict


class MarksConfig(Strict):
    every: Duration = timedelta(days=1)
    # Open positions in markets unresolved this long after their close are reported as stale.
    stale_after_days: int = Field(default=30, ge=1, le=36_500)


class PricesConfig(Strict):
    """How old a price may be and still be used (a stale price is not a real fill, nor a value).

    ``snapshot_max_age_replay``: a replay round leaves out open markets whose latest price is
    older (recorded data has gaps). ``snapshot_max_age_live``: a live market is open only while
    sync saw it trading this recently. ``mark_max_age``: marks (scheduled and the ones a round
    takes) ignore older prices; the position keeps its last mark, flagged stale.
    """

    snapshot_max_age_replay: Duration = timedelta(days=7)
    snapshot_max_age_live: Duration = timedelta(hours=6)
    mark_max_age: Duration = timedelta(days=7)


class ScoringConfig(Strict):
    """How leaderboards read a bet as a forecast: ``implied`` picks the headline "Brier (bets)".

    ``fa`` (Forecaster Arena's bet-size rule): P(side) = amount / max bet. ``kelly``: P(side) =
    p + φ·(1 − p), the belief at which the bet is the full-Kelly stake. Both are always computed and
    shown; this only chooses which one heads the tables.
    """

    implied: Literal["fa", "kelly"] = "fa"


class ToolsConfig(Strict):
    """What the cohort's research tools may read (docs/tools.md). ``corpus`` names the imported
    corpus ``search_news`` searches (none: the tool answers that no corpus is configured);
    ``news_lag``: a document is found only if published before the round time minus this."""

    corpus: str | None = Field(default=None, min_length=1)
    news_lag: Duration = timedelta(days=1)


class BudgetConfig(Strict):
    """A dollar cap on what all the cohort's agents together may spend on providers; once it is
    reached, every agent that spends holds (with the reason recorded)."""

    max_cost_usd: (
        Annotated[Decimal, Field(ge=0, le=MAX_AMOUNT, allow_inf_nan=False), PlainSerializer(str)] | None
    ) = None
