"""Stated forecasts scored on everything offered, without selection bias (ForecastBench's rule).

Scoring an agent only on the markets it chose to state rewards stating only easy ones. Here
every agent is scored on every (round, market outcome) its cohort offered it, for markets that
resolved (not void) after the round:

- its forecast for the round is the statement standing then (its latest on that outcome at or
  before the round, as in the as-stated reading a statement stands until the next one);
- with none standing the forecast is *missing* and takes the market price shown in that round
  (the imputation ForecastBench uses), and the row counts as imputed.

Per event (cohort, agent, market, outcome) the scores are means over the rounds offered; per
agent, means over events, so each event weighs the same as in the as-stated reading.
``imputed_share`` is the share of (round, event) rows that were imputed: 1 for an agent that
never states, 0 for one that stated every market in every round.

Autocast-normalised Brier (seed 001): per (round, market), the sum over the market's outcomes
of ``(f_o − y_o)²`` divided by 2, which lies in [0, 1] for any distribution. A binary market is
stored by its YES outcome alone; its NO term ``((1 − f) − (1 − y))²`` equals the YES term, so
YES rows count twice and the normalised score equals the binary Brier.
"""

from __future__ import annotations

import polars as pl

from arena.scoring.frames import ScoringFrames
from arena.scoring.scores import YES, brier, log_score, side_outcome

EVENT_OF_AGENT = ["cohort_id", "agent", "market_id", "outcome"]
AUTOCAST_DIVISOR = 2.0  # the largest possible sum of squared errors over a distribution


def offered_forecasts(frames: ScoringFrames) -> pl.DataFrame:
    """One row per (agent, round, market outcome) offered before the market resolved (not void).

    Columns: the event keys, ``offered_at``, ``price`` (shown in the round), ``p`` (the standing
    statement, null if none), ``f`` (``p``, else ``price``), ``imputed`` and ``y``.
    """
    resolutions = frames.resolutions.rename({"kind": "resolution"})
    offers = (
        frames.offers.join(frames.agents.select("cohort_id", "agent"), on="cohort_id", how="inner")
        .join(resolutions, on="market_id", how="inner")
        .with_columns(y=side_outcome())
        .filter(pl.col("y").is_not_null() & (pl.col("offered_at") < pl.col("resolved_at")))
    )
    stated = frames.forecasts.select(*EVENT_OF_AGENT, "p", offered_at="stated_at")
    joined = offers.sort("offered_at").join_asof(
        stated.sort("offered_at"),
        on="offered_at",
        by=EVENT_OF_AGENT,
        strategy="backward",
        check_sortedness=False,  # both sides were just sorted on the key
    )
    return joined.select(
        *EVENT_OF_AGENT,
        "offered_at",
        "price",
        "p",
        "y",
        f=pl.coalesce("p", "price"),
        imputed=pl.col("p").is_null(),
    ).sort(*EVENT_OF_AGENT, "offered_at")


def imputed_event_scores(offered: pl.DataFrame) -> pl.DataFrame:
    """Per event of an agent: mean Brier and log score over the rounds offered, rows and imputed rows."""
    f, y = pl.col("f"), pl.col("y")
    return offered.group_by(EVENT_OF_AGENT, maintain_order=True).agg(
        brier=brier(f, y).mean(),
        log_score=log_score(f, y).mean(),
        rounds=pl.len(),
        imputed=pl.col("imputed").sum(),
    )


def autocast_market_scores(offered: pl.DataFrame) -> pl.DataFrame:
    """Per (cohort, agent, market): the mean over rounds of the Autocast-normalised Brier."""
    halves = pl.when(pl.col("outcome") == YES).then(2.0).otherwise(1.0) * brier(pl.col("f"), pl.col("y"))
    per_round = offered.group_by("cohort_id", "agent", "market_id", "offered_at").agg(
        normalised=halves.sum() / AUTOCAST_DIVISOR
    )
    return per_round.group_by("cohort_id", "agent", "market_id").agg(brier=pl.col("normalised").mean())


def imputed_metrics(events: pl.DataFrame, markets: pl.DataFrame) -> pl.DataFrame:
    """Per agent: ``stated_brier_imputed``, ``log_score_imputed``, ``imputed_share``,
    ``imputed_events`` and ``stated_brier_autocast`` (from ``autocast_market_scores``)."""
    per_agent = events.group_by("agent").agg(
        imputed_events=pl.len(),
        stated_brier_imputed=pl.col("brier").mean(),
        log_score_imputed=pl.col("log_score").mean(),
        imputed_share=pl.col("imputed").sum() / pl.col("rounds").sum(),
    )
    autocast = markets.group_by("agent").agg(stated_brier_autocast=pl.col("brier").mean())
    return per_agent.join(autocast, on="agent", how="left")
