"""Forecaster Arena's plain-word labels for Brier scores and returns, and when the two disagree.

Bands exactly as Forecaster Arena's tables name them. The tables give ranges; where they leave an
edge open, a Brier edge belongs to the worse band ("< 0.10 Excellent"), except 0.25, which the
table's own words put in Fair ("at or near random": always saying 50% scores exactly 0.25), and a
return edge belongs to the band nearer 0 (the table's own strict "> +50%" and "< −20%" edges
extend to the others):

========================  ======================  ==========================
label                     Brier                   return %
========================  ======================  ==========================
Perfect                   exactly 0               —
Exceptional               —                       above +50
Excellent                 below 0.10              +20 (excl.) to +50 (incl.)
Good                      0.10 to below 0.20      +5 (excl.) to +20 (incl.)
Fair (at or near random)  0.20 to 0.25 (incl.)    —
Neutral                   —                       −5 to +5 (both incl.)
Poor                      above 0.25, below 0.40  −20 (incl.) to −5 (excl.)
Very Poor                 0.40 and above          below −20
========================  ======================  ==========================

0.25 is what always saying 50% scores, so Fair ends where guessing ends: worse than a coin is Poor.

**Disagreement** (``label_conflict``): an agent's bet-implied Brier and its return point
opposite ways when one reads good and the other bad: Brier Perfect/Excellent/Good (below 0.20)
with return Poor/Very Poor (below −5%), or Brier Poor/Very Poor (above 0.25) with return
Good/Excellent/Exceptional (above +5%). Fair and Neutral never disagree with anything.
"""

from __future__ import annotations

import polars as pl
from polars.expr.whenthen import ChainedThen, Then

PERFECT = "Perfect"
FAIR = "Fair (at or near random)"
# (upper edge, whether the edge itself belongs to the band, label): the first band that holds.
BRIER_BANDS: tuple[tuple[float, bool, str], ...] = (
    (0.10, False, "Excellent"),
    (0.20, False, "Good"),
    (0.25, True, FAIR),
    (0.40, False, "Poor"),
)
BRIER_WORST = "Very Poor"

# (lower edge in %, label): the first band whose edge the return passes.
RETURN_BANDS: tuple[tuple[float, str], ...] = (
    (50.0, "Exceptional"),
    (20.0, "Excellent"),
    (5.0, "Good"),
    (-5.0, "Neutral"),
    (-20.0, "Poor"),
)
RETURN_WORST = "Very Poor"

GOOD_BRIER = 0.20  # below: Perfect, Excellent or Good
BAD_BRIER = 0.25  # above: Poor or Very Poor
GOOD_RETURN = 5.0  # above: Good or better
BAD_RETURN = -5.0  # below: Poor or Very Poor


def _missing(value: pl.Expr) -> pl.Expr:
    return value.is_null() | value.is_nan()


def brier_label(brier: pl.Expr) -> pl.Expr:
    expr: Then | ChainedThen = pl.when(_missing(brier)).then(None).when(brier == 0.0).then(pl.lit(PERFECT))
    for upper, closed, label in BRIER_BANDS:
        expr = expr.when(brier <= upper if closed else brier < upper).then(pl.lit(label))
    return expr.otherwise(pl.lit(BRIER_WORST))


def return_label(return_pct: pl.Expr) -> pl.Expr:
    expr: Then | ChainedThen = pl.when(_missing(return_pct)).then(None)
    for lower, label in RETURN_BANDS:
        reached = return_pct > lower if lower > 0 else return_pct >= lower
        expr = expr.when(reached).then(pl.lit(label))
    return expr.otherwise(pl.lit(RETURN_WORST))


def disagree(brier: pl.Expr, return_pct: pl.Expr) -> pl.Expr:
    """True when the Brier label and the return label point opposite ways (module docstring)."""
    good_brier_bad_money = (brier < GOOD_BRIER) & (return_pct < BAD_RETURN)
    bad_brier_good_money = (brier > BAD_BRIER) & (return_pct > GOOD_RETURN)
    unknown = _missing(brier).fill_null(True) | _missing(return_pct).fill_null(True)
    return pl.when(unknown).then(False).otherwise(good_brier_bad_money | bad_brier_good_money)
