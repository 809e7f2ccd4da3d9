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
