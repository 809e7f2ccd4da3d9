"""The leaderboard: every agent's metrics, intervals and comparison with the leader, in one frame.

``leaderboard(frames)`` ranks the agents of whatever cohorts ``frames`` holds (narrow them first
with ``frames.cohorts([...])`` or ``frames.as_of(t)``). Its columns are ``COLUMNS``, in that
order, and are the stable keys of ``arena leaderboard --json`` (documented in the README).
"""

from __future__ import annotations

import polars as pl

from arena.scoring.bets import scored_bets
from arena.scoring.bootstrap import DEFAULT_LEVEL, DEFAULT_REPLICATES
from arena.scoring.frames import ScoringFrames
from arena.scoring.intervals import COMPARED, COMPARISON_FIELDS, bootstrap_columns
from arena.scoring.labels import brier_label, return_label
from arena.scoring.pnl import market_pnl
from arena.scoring.stated import event_scores, standing_forecasts
from arena.scoring.stated_intervals import stated_interval_columns, stated_interval_names
from arena.scoring.stated_readings import STATED_COLUMNS, StatedReadings, stated_readings
from arena.scoring.summary import (
    bet_metrics,
    calibration_metrics,
    money,
    portfolio_metrics,
    roster,
    stated_metrics,
)
from arena.scoring.tournament import COLUMNS as TOURNAMENT_COLUMNS
from arena.scoring.tournament import tournament_standings

# metric -> True when higher is better (the sort direction of ``by``).
SORTABLE: dict[str, bool] = {
    "return_pct": True,
    "pnl": True,
    "value": True,
    "brier": False,
    "bss_market": True,
    "stated_brier": False,
    "stated_brier_imputed": False,
    "log_score": True,
    "rel_log_score": True,
    "tournament_take": True,
    "win_rate": True,
    "sharpe": True,
    "max_drawdown": False,
}
MIN_MARKETS = 30  # fewer resolved markets than this: intervals and comparisons are flagged

COLUMNS: tuple[str, ...] = (
    *("rank", "agent", "agent_kind", "baseline", "cohorts"),
    *("bankroll", "value", "cash", "pnl", "realized_pnl", "unrealized_pnl", "marked_at"),
    *("return_pct", "return_pct_lo", "return_pct_hi", "return_label"),
    *("bets", "staked", "resolved_bets", "resolved_markets", "few_markets", "win_rate"),
    *("brier", "brier_lo", "brier_hi", "brier_label", "bss_random", "bss_random_lo", "bss_random_hi"),
    *("brier_market", "bss_market", "bss_market_lo", "bss_market_hi"),
    *("stated_events", "stated_brier", "stated_brier_lo", "stated_brier_hi"),
    *("log_score", "log_score_lo", "log_score_hi", "rel_log_score", "rel_log_score_lo", "rel_log_score_hi"),
    *TOURNAMENT_COLUMNS,
    *(
        f"{source}_{part}"
        for source in ("implied", "stated")
        for part in ("ece", "reliability", "resolution", "uncertainty")
    ),
    *("return_days", "volatility", "sharpe", "max_drawdown", "turnover", "deployed_share"),
    *("decisions", "valid_rate", "cost", "cost_per_decision", "tokens", "mean_latency_s"),
    *(f"vs_leader_{m}_{f}" for m in COMPARED for f in (*COMPARISON_FIELDS, "few_markets")),
    *STATED_COLUMNS,
    *stated_interval_names(),
)


def leaderboard(
    frames: ScoringFrames,
    *,
    by: str = "return_pct",
    seed: int = 0,
    replicates: int = DEFAULT_REPLICATES,
    level: float = DEFAULT_LEVEL,
    min_markets: int = MIN_MARKETS,
) -> pl.DataFrame:
    """One row per agent, sorted by ``by`` (best first; ties by name), with ``COLUMNS``."""
    if by not in SORTABLE:
        raise ValueError(f"cannot sort by {by!r}; choose one of {', '.join(SORTABLE)}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    bets = scored_bets(frames)
    standing = standing_forecasts(frames)
    events = event_scores(standing)
    readings = stated_readings(frames)
    table = _ranked(_point_estimates(frames, bets, standing, events, readings), by)
    pnl_by_market = market_pnl(frames)
    intervals = bootstrap_columns(
        table,
        bets,
        events,
        pnl_by_market,
        seed=seed,
        replicates=replicates,
        level=level,
        min_markets=min_markets,
    )
    stated = stated_interval_columns(
        table["agent"].to_list(),
        events,
        readings.imputed_events,
        seed=seed,
        replicates=replicates,
        level=level,
        min_markets=min_markets,
    )
    table = table.join(intervals, on="agent", how="left", maintain_order="left")
    table = table.join(stated, on="agent", how="left", maintain_order="left")
    return table.with_columns(
        bss_random_lo=1.0 - pl.col("brier_hi") / 0.25,
        bss_random_hi=1.0 - pl.col("brier_lo") / 0.25,
        few_markets=pl.col("resolved_markets") < min_markets,
        brier_label=brier_label(pl.col("brier")),
        return_label=return_label(pl.col("return_pct")),
    ).select(COLUMNS)


def _point_estimates(
    frames: ScoringFrames,
    bets: pl.DataFrame,
    standing: pl.DataFrame,
    events: pl.DataFrame,
    readings: StatedReadings,
) -> pl.DataFrame:
    table = roster(frames)
    parts = (
        readings.per_agent,
        money(frames),
        bet_metrics(bets),
        stated_metrics(frames, events),
        tournament_standings(frames),
        calibration_metrics(bets, standing),
        portfolio_metrics(frames),
    )
    for part in parts:
        table = table.join(part, on="agent", how="left", maintain_order="left")
    counts = ("bets", "staked", "resolved_bets", "resolved_markets")
    return table.with_columns(pl.col(c).fill_null(0) for c in counts)


def _ranked(table: pl.DataFrame, by: str) -> pl.DataFrame:
    """Sorted best first on ``by`` (nulls last, ties by name), with ``rank`` (ties share a rank)."""
    key = pl.col(by).cast(pl.Float64).fill_nan(None)
    ordered = table.sort([key, pl.col("agent")], descending=[SORTABLE[by], False], nulls_last=True)
    rank = pl.when(key.is_null()).then(None).otherwise(key.rank("min", descending=SORTABLE[by]))
    return ordered.with_columns(rank=rank.cast(pl.Int64))
