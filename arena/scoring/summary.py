"""Point estimates per agent: money, bets, stated forecasts, calibration, risk, trading and cost.

Rows are agents by name over whatever cohorts the frames hold, so one cohort gives that
cohort's table and several give the cross-cohort one. Across cohorts money is *summed*, never
averaged: value, P/L and bankroll add up over an agent's seats, and return % is total P/L over
the total bankroll allocated to the agent (cohorts of different ages are never averaged).
Bets and forecasts pool (a bet is a bet whichever cohort placed it).
"""

from __future__ import annotations

import polars as pl

from arena.scoring.calibration import murphy
from arena.scoring.costs import cost_metrics
from arena.scoring.frames import ScoringFrames
from arena.scoring.pnl import seat_values, trading
from arena.scoring.risk import risk_metrics

RANDOM_BRIER = 0.25  # always 50%: the "random" reference of the Brier skill score
MURPHY_PARTS = ("ece", "reliability", "resolution", "uncertainty")


def roster(frames: ScoringFrames) -> pl.DataFrame:
    """One row per agent name: kind (of its first seat), baseline, cohorts, total bankroll."""
    return (
        frames.agents.sort("cohort_id")
        .group_by("agent")
        .agg(
            agent_kind=pl.col("agent_kind").first(),
            baseline=pl.col("baseline").any(),
            cohorts=pl.col("cohort_id").n_unique(),
            bankroll=pl.col("bankroll").sum(),
        )
        .sort("agent")
    )


def _all_or_null(column: str) -> pl.Expr:
    """Sum over seats, or null when any seat's figure is unknown (traded but never marked)."""
    return pl.when(pl.col(column).null_count() == 0).then(pl.col(column).sum())


def money(frames: ScoringFrames) -> pl.DataFrame:
    seats = seat_values(frames)
    totals = seats.group_by("agent").agg(
        value=_all_or_null("value"),
        cash=_all_or_null("cash"),
        pnl=_all_or_null("pnl"),
        realized_pnl=_all_or_null("realized"),
        unrealized_pnl=_all_or_null("unrealized"),
        marked_at=pl.col("marked_at").max(),
        bankroll=pl.col("bankroll").sum(),
    )
    return_pct = pl.col("pnl").cast(pl.Float64) / pl.col("bankroll").cast(pl.Float64) * 100.0
    return totals.with_columns(return_pct=return_pct).drop("bankroll")


def bet_metrics(bets: pl.DataFrame) -> pl.DataFrame:
    """Per agent: bets, staked, resolved_bets, resolved_markets, win_rate, brier, brier_market, skills."""
    scored = pl.col("scored")
    per_agent = bets.group_by("agent").agg(
        bets=pl.len(),
        staked=pl.col("amount").sum(),
        resolved_bets=scored.sum(),
        resolved_markets=pl.col("market_id").filter(scored).n_unique(),
        win_rate=pl.col("won").filter(pl.col("decisive")).mean(),
        brier=pl.col("brier").filter(scored).mean(),
        brier_market=pl.col("brier_market").filter(scored).mean(),
    )
    return per_agent.with_columns(
        bss_random=1.0 - pl.col("brier") / RANDOM_BRIER,
        bss_market=pl.when(pl.col("brier_market") > 0).then(1.0 - pl.col("brier") / pl.col("brier_market")),
    )


def stated_metrics(frames: ScoringFrames, events: pl.DataFrame) -> pl.DataFrame:
    """Per agent: events scored, time-weighted Brier / log / relative log."""
    means = events.group_by("agent").agg(
        stated_events=pl.len(),
        stated_brier=pl.col("brier").mean(),
        log_score=pl.col("log_score").mean(),
        rel_log_score=pl.col("rel_log_score").mean(),
    )
    table = roster(frames).select("agent").join(means, on="agent", how="left", maintain_order="left")
    return table.with_columns(pl.col("stated_events").fill_null(0))


def calibration_metrics(bets: pl.DataFrame, standing: pl.DataFrame) -> pl.DataFrame:
    """Per agent: ECE and Murphy parts of implied (bets) and stated forecasts, prefixed by source."""
    parts = []
    for prefix, pairs in (("implied", implied_pairs(bets)), ("stated", stated_pairs(standing))):
        table = murphy(pairs, ["agent"]).select("agent", *MURPHY_PARTS)
        parts.append(table.rename({part: f"{prefix}_{part}" for part in MURPHY_PARTS}))
    return parts[0].join(parts[1], on="agent", how="full", coalesce=True)


def implied_pairs(bets: pl.DataFrame) -> pl.DataFrame:
    """Forecast/outcome pairs of resolved bets, YES-oriented for binary bets, weight 1 each."""
    return bets.filter(pl.col("scored")).select(
        "cohort_id", "agent", "market_id", forecast="forecast_yes", outcome="outcome_yes", weight=pl.lit(1.0)
    )


def stated_pairs(standing: pl.DataFrame) -> pl.DataFrame:
    """Forecast/outcome pairs of standing statements, weighted by their share of the event's time."""
    return standing.select("cohort_id", "agent", "market_id", forecast="p", outcome="y", weight="weight")


def portfolio_metrics(frames: ScoringFrames) -> pl.DataFrame:
    """Per agent: risk (daily returns), turnover, deployed share and cost of deciding.

    ``turnover`` = money traded (buys + sells) / bankroll allocated: 2.0 means the agent traded
    twice its capital. ``deployed_share`` = mean over daily closes of the share of value in positions.
    """
    activity = (
        trading(frames)
        .group_by("agent")
        .agg(
            traded=pl.col("traded").sum(),
            bankroll=pl.col("bankroll").sum().cast(pl.Float64),
            deployed_sum=pl.col("deployed_sum").sum(),
            marks=pl.col("marks").sum(),
        )
    )
    activity = activity.select(
        "agent",
        turnover=pl.col("traded").fill_null(0.0) / pl.col("bankroll"),
        deployed_share=pl.when(pl.col("marks") > 0).then(pl.col("deployed_sum") / pl.col("marks")),
    )
    return activity.join(risk_metrics(frames), on="agent", how="left", maintain_order="left").join(
        cost_metrics(frames), on="agent", how="left"
    )
