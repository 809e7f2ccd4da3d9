"""What deciding cost each agent: money, tokens, latency and how often its answer was usable."""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.health import NOT_ASKED
from arena.scoring.rules.sums import fmean


def cost_metrics(frames: ScoringFrames) -> pl.DataFrame:
    """Per agent: decisions, valid_rate (share without error of the decisions it was asked for:
    budget holds are not answers), cost (Decimal) and cost per decision,
    tokens and mean latency in seconds. Agents that never decided have 0 decisions and nulls."""
    decisions = frames.decisions.group_by("agent", maintain_order=True).agg(
        decisions=pl.len(),
        valid=pl.col("error_kind").is_null().sum(),
        asked=(~pl.col("error_kind").is_in(NOT_ASKED) | pl.col("error_kind").is_null()).sum(),
        cost=pl.col("cost").sum(),
        tokens=pl.col("tokens").sum(),
        mean_latency_s=fmean(pl.col("latency_s")),
    )
    return (
        frames.agents.select("agent")
        .unique()
        .join(decisions, on="agent", how="left", maintain_order="left")
        .with_columns(pl.col("decisions").fill_null(0))
        .with_columns(
            valid_rate=pl.when(pl.col("asked") > 0).then(pl.col("valid") / pl.col("asked")),
            cost_per_decision=pl.when(pl.col("decisions") > 0).then(
                pl.col("cost").cast(pl.Float64) / pl.col("decisions")
            ),
        )
        .drop("valid", "asked")
    )
