"""Risk from the marks: daily returns, their volatility and Sharpe ratio, and the max drawdown.

Daily returns use each seat's daily close: the last mark of each UTC day; the close before the
first one is the bankroll (so the first day's trading counts). Days without a mark are not
filled in: a return then spans the gap. An agent in several cohorts is one book: the return
of a day is ``Σ (close − previous close) / Σ previous close`` over its seats marked that day,
so capital joining with a new cohort is not mistaken for profit.

- ``volatility``: standard deviation of daily returns (sample, ddof = 1), not annualised.
- ``sharpe``: mean daily return / its standard deviation, risk-free rate 0, not annualised
  (multiply by √365 to annualise: prediction markets trade every day). Needs 2+ returns.
- ``max_drawdown``: largest fall of the compounded daily index from its running peak, as a
  fraction (0.25 = the book lost a quarter from its best close).
"""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.sums import fmean, fstd, fsum

SEAT = ["cohort_id", "agent"]


def daily_returns(frames: ScoringFrames) -> pl.DataFrame:
    """Per (agent, day): the book's return that day (see the module docstring)."""
    closes = (
        frames.snapshots.with_columns(
            day=pl.col("marked_at").dt.date(), value=pl.col("total_value").cast(pl.Float64)
        )
        .sort("marked_at", maintain_order=True)
        .group_by([*SEAT, "day"], maintain_order=True)
        .agg(pl.col("value").last())
        .join(frames.agents.select(*SEAT, "bankroll"), on=SEAT, how="inner")
        .sort([*SEAT, "day"], maintain_order=True)
        .with_columns(
            previous=pl.col("value").shift(1).over(SEAT).fill_null(pl.col("bankroll").cast(pl.Float64))
        )
    )
    return (
        closes.group_by(["agent", "day"], maintain_order=True)
        .agg(change=fsum(pl.col("value") - pl.col("previous")), base=fsum(pl.col("previous")))
        .filter(pl.col("base") > 0)
        .with_columns(daily_return=pl.col("change") / pl.col("base"))
        .select("agent", "day", "daily_return")
        .sort("agent", "day")
    )


def risk_metrics(frames: ScoringFrames) -> pl.DataFrame:
    """Per agent: return_days, volatility, sharpe and max_drawdown (see the module docstring)."""
    returns = daily_returns(frames).with_columns(
        index=(1.0 + pl.col("daily_return")).cum_prod().over("agent"),
    )
    drawdown = 1.0 - pl.col("index") / pl.col("index").cum_max().clip(lower_bound=1.0)
    std = fstd(pl.col("daily_return"))
    return returns.group_by("agent", maintain_order=True).agg(
        return_days=pl.len(),
        volatility=std,
        sharpe=pl.when(std > 0).then(fmean(pl.col("daily_return")) / std),
        max_drawdown=drawdown.max().clip(lower_bound=0.0),
    )
