"""Float aggregates in row order, so the same stored log always gives the same bits.

Polars may add up a group's floats in an order that depends on how its threads split the work
(``group_by(...).agg(pl.col(x).sum())`` takes a partitioned fast path), and float addition is
not associative: two ``arena leaderboard --json`` runs on one database differed in the last
digit of ``deployed_share``. These helpers gather each group's values into a list first (a
group keeps its rows' order) and reduce the list, which polars does for one list at a time, in
order. With every scoring ``group_by`` keeping its groups in first-seen order and the loader
reading rows in a fixed order, each figure has one summation order.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def fsum(expr: pl.Expr) -> pl.Expr:
    """Sum of the group's values in row order (0 for none, never −0)."""
    return expr.implode().list.sum() + 0.0


def fmean(expr: pl.Expr) -> pl.Expr:
    """Mean of the group's non-null values in row order (null for none)."""
    return expr.implode().list.mean()


def fstd(expr: pl.Expr) -> pl.Expr:
    """Sample standard deviation (ddof 1) of the group's values in row order."""
    return expr.implode().list.std(ddof=1)


def grouped_sums(frame: pl.DataFrame, keys: list[str], columns: list[str]) -> pl.DataFrame:
    """Per distinct ``keys``: the sum of each float column, in row order, fast for many groups.

    Rows are ordered by their group (a stable sort on integer codes of the keys, so each group
    keeps its rows' order) and each group's run is added up by ``numpy.add.reduceat`` in one
    single-threaded pass: the same rows always give the same bits, and 100,000 groups cost
    milliseconds instead of a list each. Groups come out in no promised order.
    """
    if frame.is_empty():
        return frame.select(*keys, *(pl.col(c).cast(pl.Float64) for c in columns))
    group = np.zeros(len(frame), dtype=np.int64)
    for key in keys:
        code = frame[key].cast(pl.Categorical).to_physical().cast(pl.Int64).to_numpy()
        group = group * (int(code.max()) + 1) + code
    order = np.argsort(group, kind="stable")
    ordered = group[order]
    first = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sums = {
        c: np.add.reduceat(frame[c].cast(pl.Float64).fill_null(0.0).to_numpy()[order], first) for c in columns
    }
    return (
        frame[order[first]]
        .select(keys)
        .with_columns(pl.Series(c, v, dtype=pl.Float64) for c, v in sums.items())
    )


def run_totals(values: pl.Series, runs: pl.Series) -> pl.Series:
    """Per row, the sum of ``values`` over its run: consecutive rows with the same ``runs`` id.

    For frames already sorted by group (a sum ``.over()`` a group would add in a thread-dependent
    order); each run is added up in row order.
    """
    if values.is_empty():
        return values.cast(pl.Float64)
    ids = runs.to_numpy()
    first = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    totals = np.add.reduceat(values.cast(pl.Float64).fill_null(0.0).to_numpy(), first)
    return pl.Series(values.name, np.repeat(totals, np.diff(np.append(first, len(ids)))), dtype=pl.Float64)
