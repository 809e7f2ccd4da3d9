"""Plain-word labels for Brier scores and returns, so a table reads at a glance.

A Brier band includes its upper edge; a return edge belongs to the band nearer 0 (exactly +5%
is "flat", exactly −20% is "poor"):

=============  ===================  ===================
label          Brier                return %
=============  ===================  ===================
excellent      0 – 0.10             —
exceptional    —                    above +50
strong         —                    +20 – +50
good           0.10 – 0.20          +5 – +20
fair / flat    0.20 – 0.25 (fair)   −5 – +5 (flat)
poor           0.25 – 0.40          −20 – −5
very poor      above 0.40           below −20
=============  ===================  ===================

0.25 is what always saying 50% scores, so "fair" ends where guessing begins.
"""

from __future__ import annotations

import polars as pl
from polars.expr.whenthen import ChainedThen, Then

BRIER_BANDS: tuple[tuple[float, str], ...] = (
    (0.10, "excellent"),
    (0.20, "good"),
    (0.25, "fair"),
    (0.40, "poor"),
)
BRIER_WORST = "very poor"

# (lower edge in %, label): the first band whose edge the return passes.
RETURN_BANDS: tuple[tuple[float, str], ...] = (
    (50.0, "exceptional"),
    (20.0, "strong"),
    (5.0, "good"),
    (-5.0, "flat"),
    (-20.0, "poor"),
)
RETURN_WORST = "very poor"


def brier_label(brier: pl.Expr) -> pl.Expr:
    expr: Then | ChainedThen = pl.when(brier.is_null() | brier.is_nan()).then(None)
    for upper, label in BRIER_BANDS:
        expr = expr.when(brier <= upper).then(pl.lit(label))
    return expr.otherwise(pl.lit(BRIER_WORST))


def return_label(return_pct: pl.Expr) -> pl.Expr:
    expr: Then | ChainedThen = pl.when(return_pct.is_null() | return_pct.is_nan()).then(None)
    for lower, label in RETURN_BANDS:
        reached = return_pct > lower if lower > 0 else return_pct >= lower
        expr = expr.when(reached).then(pl.lit(label))
    return expr.otherwise(pl.lit(RETURN_WORST))
