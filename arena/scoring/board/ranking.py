"""The leaderboard: every agent's metrics, intervals and comparison with the leader, in one frame.

``leaderboard(frames)`` ranks the agents of whatever cohorts ``frames`` holds (narrow them first
with ``frames.cohorts([...])`` or ``frames.as_of(t)``; pool by model with
``arena.scoring.stats.pooling.by_model``). Over several cohorts, a seat whose agent never decided
there is left out (``pooling.decided_seats``): it would dilute the return. Its columns are
``COLUMNS``, in that order, built from the metric registry (``arena.scoring.metrics.registry``), and
are the stable keys of ``arena leaderboard --json`` (documented in the README).
"""

from __future__ import annotations

from functools import partial

import polars as pl

from arena.scoring.board.replicates import collapse, replicate_groups
from arena.scoring.load.frames import ScoringFrames
from arena.scoring.metrics.inputs import Inputs
from arena.scoring.metrics.registry import BY_KEY, COLUMNS, METRICS, SORTABLE
from arena.scoring.metrics.spec import PerAgent
from arena.scoring.metrics.summary import roster
from arena.scoring.rules.pnl import market_pnl
from arena.scoring.rules.sums import fsum
from arena.scoring.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_REPLICATES
from arena.scoring.stats.intervals import bootstrap_columns, ratio_sources, sum_column
from arena.scoring.stats.pooling import decided_seats

__all__ = ["COLUMNS", "MIN_MARKETS", "SORTABLE", "leaderboard"]

MIN_MARKETS = 30  # fewer resolved markets than this: intervals and comparisons are flagged
COUNTS = ("bets", "staked", "resolved_bets", "resolved_markets")


def leaderboard(
    frames: ScoringFrames,
    *,
    by: str = "return_pct",
    seed: int = 0,
    replicates: int = DEFAULT_REPLICATES,
    level: float = DEFAULT_LEVEL,
    min_markets: int = MIN_MARKETS,
) -> pl.DataFrame:
    """One row per agent, sorted by ``by`` (best first; ties by name), with ``COLUMNS``; a
    replicated agent is one row, the mean of its replicates (``arena.scoring.board.replicates``)."""
    inputs = leaderboard_inputs(frames, min_markets)
    return ranked(inputs, by=by, seed=seed, replicates=replicates, level=level)[0]


def leaderboard_inputs(frames: ScoringFrames, min_markets: int = MIN_MARKETS) -> Inputs:
    """What ``leaderboard(frames)`` ranks from: the decided seats' frames and their row tables."""
    return Inputs.of(decided_seats(frames), min_markets=min_markets)


def ranked(
    inputs: Inputs,
    *,
    by: str = "return_pct",
    seed: int = 0,
    replicates: int = DEFAULT_REPLICATES,
    level: float = DEFAULT_LEVEL,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``leaderboard`` from its ``leaderboard_inputs`` (for callers that read those tables too),
    and the replicates' own rows (each with its market-clustered intervals; empty when no agent
    is replicated), ranked among themselves."""
    _check(by, level)
    seats = point_estimates(inputs)
    groups = replicate_groups(seats["agent"].to_list())
    boot = partial(
        bootstrap_columns,
        sources=ratio_sources(inputs),
        pnl_by_market=market_pnl(inputs.frames),
        difficulty_cells=inputs.difficulty_cells,
        seed=seed,
        replicates=replicates,
        level=level,
        min_markets=inputs.min_markets,
    )
    table = _ranked(collapse(seats, groups, inputs), by)
    board = _with_intervals(table, boot(table, seats=seats, groups=groups))
    replicated = [seat for members in groups.values() for seat in members]
    if not replicated:
        return board, board.clear()
    copies = _ranked(collapse(seats.filter(pl.col("agent").is_in(replicated)), {}, inputs), by)
    return board, _with_intervals(copies, boot(copies))


def _with_intervals(table: pl.DataFrame, intervals: pl.DataFrame) -> pl.DataFrame:
    return table.join(intervals, on="agent", how="left", maintain_order="left").select(COLUMNS)


def _check(by: str, level: float) -> None:
    if by not in SORTABLE:
        raise ValueError(f"cannot sort by {by!r}; choose one of {', '.join(SORTABLE)}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")


def point_estimates(inputs: Inputs) -> pl.DataFrame:
    """Every registered metric's value per agent (no intervals), one row per agent by name."""
    table = roster(inputs.frames)
    parts: dict[PerAgent, list[str]] = {}
    for metric in METRICS:
        if metric.per_agent is not None:
            parts.setdefault(metric.per_agent, []).append(metric.key)
    for compute, keys in parts.items():
        table = table.join(
            compute(inputs).select("agent", *keys), on="agent", how="left", maintain_order="left"
        )
    table = table.join(_ratios(inputs), on="agent", how="left", maintain_order="left")
    table = table.with_columns(pl.col(c).fill_null(0) for c in COUNTS)
    return table.with_columns(
        metric.derive(inputs).alias(metric.key) for metric in METRICS if metric.derive is not None
    )


def _ratios(inputs: Inputs) -> pl.DataFrame:
    """The ratio metrics per agent: ``Σ num / Σ den`` over their source's rows (null on nothing)."""
    table = roster(inputs.frames).select("agent")
    for source, rows in ratio_sources(inputs).items():
        ratios = [m for m in METRICS if m.ratio is not None and m.ratio.source == source]
        columns = sorted({sum_column(m, part) for m in ratios for part in ("num", "den")})
        sums = rows.group_by("agent", maintain_order=True).agg(fsum(pl.col(c)).alias(c) for c in columns)
        values = []
        for m in ratios:
            num, den = pl.col(sum_column(m, "num")), pl.col(sum_column(m, "den"))
            value: pl.Expr = pl.when(den > 0).then(num / den)
            if m.ratio is not None and m.ratio.skill:
                value = 1.0 - value / m.ratio.reference
            values.append(value.alias(m.key))
        table = table.join(sums.select("agent", *values), on="agent", how="left", maintain_order="left")
    return table


def _ranked(table: pl.DataFrame, by: str) -> pl.DataFrame:
    """Sorted best first on ``by`` (nulls last, ties by name), with ``rank`` (ties share a rank).

    A failed agent (``arena.scoring.rules.health``) is not ranked among working agents: it comes after
    them, without a rank, whatever its figures. An agent carrying a flag that says ``by`` cannot be
    read as skill for it (``Metric.demoted_by``: a bet reading contradicting its bets, selective
    statements, a hidden price seen) ranks below every agent carrying none, however good its
    figure: its ranks follow theirs."""
    failed = pl.col("failed").cast(pl.Boolean).fill_null(False)
    key = pl.when(failed).then(None).otherwise(pl.col(by).cast(pl.Float64).fill_nan(None))
    flags = [pl.col(flag).cast(pl.Boolean).fill_null(False) for flag in BY_KEY[by].demoted_by]
    tiered = table.with_columns(_tier=pl.any_horizontal(flags) if flags else pl.lit(False))
    tier = pl.col("_tier")
    ordered = tiered.sort(
        [failed, key.is_null(), tier, key, pl.col("agent")],
        descending=[False, False, False, SORTABLE[by], False],
        nulls_last=True,
    )
    # Ranks count within each tier; the flagged tier's start after the last rank of the other.
    within = key.rank("min", descending=SORTABLE[by]).over(tier)
    before = pl.when(tier).then(key.filter(~tier).count()).otherwise(0)
    rank = pl.when(key.is_null()).then(None).otherwise(within + before)
    return ordered.with_columns(rank=rank.cast(pl.Int64)).drop("_tier")
