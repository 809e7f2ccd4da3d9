"""A replicated agent on the leaderboard: one row, the mean of its replicates.

An agent configured with ``replicates = N`` sits as ``name#1`` … ``name#N``
(``arena.cohorts.seats``). The board shows one row ``name`` whose every figure is the mean of
its replicates' figures (counts too, so they may be fractional; a flag such as ``failed`` is
set when any replicate has it; the latest mark time is the latest), with ``replicates = N``;
labels and flags derived from figures are derived again from the means. Its intervals come from
a two-stage bootstrap (``arena.scoring.stats.bootstrap.clustered_intervals``) and so include the
spread between replicates. Each replicate's own row is available beside it (``replicate_rows``).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from arena.cohorts.seats import replicated_agent
from arena.scoring.metrics.inputs import Inputs
from arena.scoring.metrics.registry import METRICS

DERIVED = tuple(m for m in METRICS if m.derive is not None)


def replicate_groups(seats: Iterable[str]) -> dict[str, list[str]]:
    """Replicated agent name → its seats' names, in board order; empty when nothing is replicated.

    Pooled with a cohort where the same name sits once, unreplicated, the copies keep their own
    rows: a mean row would take that agent's name."""
    names = list(seats)
    groups: dict[str, list[str]] = {}
    for seat in names:
        agent = replicated_agent(seat)
        if agent is not None:
            groups.setdefault(agent, []).append(seat)
    return {agent: copies for agent, copies in groups.items() if agent not in names}


def collapse(table: pl.DataFrame, groups: dict[str, list[str]], inputs: Inputs) -> pl.DataFrame:
    """``table`` (one row per seat) with each group's seats replaced by one mean row, and a
    ``replicates`` column (1 for an agent without replicates)."""
    if not groups:
        return table.with_columns(replicates=pl.lit(1, pl.Int64))
    member_of = {seat: agent for agent, seats in groups.items() for seat in seats}
    derived = {m.key for m in DERIVED}
    grouped = (
        table.filter(pl.col("agent").is_in(list(member_of)))
        .with_columns(pl.col("agent").replace_strict(member_of, return_dtype=pl.String))
        .group_by("agent", maintain_order=True)
        .agg(
            *(
                _mean_of(name, dtype)
                for name, dtype in table.schema.items()
                if name not in {"agent", *derived}
            ),
            replicates=pl.len().cast(pl.Int64),
        )
        .with_columns(m.derive(inputs).alias(m.key) for m in DERIVED if m.derive is not None)
    )
    plain = table.filter(~pl.col("agent").is_in(list(member_of))).with_columns(replicates=pl.lit(1, pl.Int64))
    return pl.concat([plain, grouped.select(plain.columns)], how="vertical_relaxed")


def _mean_of(name: str, dtype: pl.DataType) -> pl.Expr:
    column = pl.col(name)
    if dtype == pl.Boolean:
        return column.any()
    if dtype.is_temporal():
        return column.max()
    if isinstance(dtype, pl.Decimal):
        return column.mean().cast(dtype)  # back to money, to the micro-dollar
    if dtype.is_numeric():
        return column.mean()
    return column.first()  # kind, guard state: the same for every replicate
