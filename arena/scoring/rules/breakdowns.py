"""Where an agent's results come from: bets split by venue, category and horizon.

Each row covers one agent and one bucket of one dimension: ``venue``, ``category`` (markets
without a category are "unknown") or ``horizon`` (days from bet to resolution: <=7d, <=30d,
<=90d, >90d; resolved bets only, so it has no "unresolved" bucket). Columns:

- ``bets``, ``staked`` (dollars) over all bets in the bucket;
- ``scored_bets``, ``brier``, ``brier_market`` over bets on resolved, non-void markets;
- ``win_rate`` over bets on decisively resolved markets (YES/NO/OUTCOME);
- ``hold_pnl``: dollars the resolved bets made held to resolution (sells ignored), and
  ``hold_roi`` = hold_pnl / dollars staked on those bets.
"""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import READINGS, ScoringFrames, suffixed
from arena.scoring.rules.bets import scored_bets
from arena.scoring.rules.sums import fmean, fsum

DIMENSIONS = ("venue", "category", "horizon")
BRIERS = (*(suffixed("brier", r) for r in READINGS), "brier_market")
UNKNOWN = "unknown"


def breakdowns(frames: ScoringFrames) -> pl.DataFrame:
    """Long frame: agent, dimension, bucket and the bucket's statistics (see module docstring)."""
    bets = scored_bets(frames).with_columns(pl.col("category").fill_null(UNKNOWN))
    parts = []
    for dimension in DIMENSIONS:
        subset = bets.filter(pl.col("scored")) if dimension == "horizon" else bets
        parts.append(
            subset.group_by("agent", pl.col(dimension).alias("bucket"), maintain_order=True)
            .agg(_bucket_stats())
            .with_columns(dimension=pl.lit(dimension))
        )
    columns = ["agent", "dimension", "bucket", "bets", "staked", "scored_bets", *BRIERS]
    return (
        pl.concat(parts)
        .select(*columns, "win_rate", "hold_pnl", "hold_roi")
        .sort("agent", "dimension", "bucket")
    )


def _bucket_stats() -> list[pl.Expr]:
    scored = pl.col("scored")
    staked_scored = pl.col("amount").filter(scored).sum().cast(pl.Float64)
    hold = fsum(pl.col("hold_pnl").filter(scored))
    return [
        pl.len().alias("bets"),
        pl.col("amount").sum().cast(pl.Float64).alias("staked"),
        scored.sum().alias("scored_bets"),
        *(fmean(pl.col(c).filter(scored)).alias(c) for c in BRIERS),
        fmean(pl.col("won").filter(pl.col("decisive")).cast(pl.Float64)).alias("win_rate"),
        hold.alias("hold_pnl"),
        pl.when(staked_scored > 0).then(hold / staked_scored).alias("hold_roi"),
    ]
