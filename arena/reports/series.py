"""Equity curves small enough to draw: at most a few thousand marks per agent, none invented.

A live cohort marked every few minutes holds hundreds of thousands of marks per agent; a chart
cannot show more points than it has pixels, and a browser (or an HTML report) chokes on them.
``thin_marks`` keeps, per agent, the last real mark of each equal slice of time plus the very
first one, so the curve keeps its shape, its start and its latest value exactly.
"""

from __future__ import annotations

import polars as pl

MAX_POINTS = 1_500


def thin_marks(snapshots: pl.DataFrame, max_points: int = MAX_POINTS) -> pl.DataFrame:
    """``snapshots`` (``agent``, ``marked_at``, ...) with at most ``max_points + 1`` rows per agent."""
    if snapshots.is_empty() or snapshots.group_by("agent").len()["len"].max() <= max_points:  # type: ignore[operator]
        return snapshots.sort("agent", "marked_at")
    micros = pl.col("marked_at").dt.epoch("us")
    start, end = snapshots.select(micros.min()).item(), snapshots.select(micros.max()).item()
    width = max(1, -(-(end - start + 1) // max_points))
    ordered = snapshots.sort("agent", "marked_at").with_columns(_slice=(micros - start) // width)
    first = ordered.group_by("agent", maintain_order=True).first()
    last = ordered.group_by("agent", "_slice", maintain_order=True).last()
    kept = pl.concat([first, last.select(first.columns)]).unique(["agent", "marked_at"])
    return kept.sort("agent", "marked_at").drop("_slice")
