"""Row-wise scoring rules as polars expressions: one definition, used by every aggregate.

The outcome of a forecast is a number ``y``: 1 if the forecast outcome won, 0 if it lost, and
0.5 when the market resolved 50-50 (each side paid half). Voided markets have no ``y`` and are
left out of every score. With ``y`` in {0, 0.5, 1} the rules below are the usual ones:

- Brier ``(f − y)²``: 0 perfect, 0.25 for always 50%, 1 worst.
- Log score ``y·ln f + (1 − y)·ln(1 − f)`` (natural log, higher is better, 0 perfect): the log
  of the probability given to what happened. ``f`` is clipped into [LOG_CLIP, 1 − LOG_CLIP]
  first, so one stated 0% does not make a whole average −∞ (a 0.1% floor, as Metaculus uses).

The bet-implied forecast follows DESIGN.md: implied confidence ``c = amount / max_bet`` of the
decision; the probability of YES implied by a binary bet is ``c`` for a YES bet and ``1 − c``
for a NO bet; Brier ``(f_YES − y_YES)²``, which equals ``(c − y_side)²``, the multi-outcome rule.
"""

from __future__ import annotations

import polars as pl

LOG_CLIP = 1e-3
YES, NO = "YES", "NO"


def implied_confidence(amount: str = "amount", max_bet: str = "max_bet") -> pl.Expr:
    """Bet size as a share of the decision's max bet: a max bet is 100% confidence."""
    return pl.col(amount).cast(pl.Float64) / pl.col(max_bet).cast(pl.Float64)


def side_outcome(outcome: str = "outcome", resolution: str = "resolution") -> pl.Expr:
    """``y`` of a side: 1 won, 0 lost, 0.5 on a 50-50 resolution, null when void or unresolved.

    ``resolution`` is the column holding the resolution kind; ``winner`` must sit beside it.
    """
    return (
        pl.when(pl.col(resolution).is_null() | (pl.col(resolution) == "VOID"))
        .then(None)
        .when(pl.col(resolution) == "5050")
        .then(pl.lit(0.5))
        .otherwise((pl.col(outcome) == pl.col("winner")).cast(pl.Float64))
    )


def toward_yes(value: pl.Expr, outcome: str = "outcome") -> pl.Expr:
    """A side's probability (or outcome) read as YES's: unchanged for YES, ``1 − x`` for NO.

    Multi-outcome sides are returned unchanged: their forecast is about that outcome.
    """
    return pl.when(pl.col(outcome) == NO).then(1.0 - value).otherwise(value)


def brier(forecast: pl.Expr, outcome: pl.Expr) -> pl.Expr:
    return (forecast - outcome) ** 2


def log_score(forecast: pl.Expr, outcome: pl.Expr) -> pl.Expr:
    clipped = forecast.clip(LOG_CLIP, 1.0 - LOG_CLIP)
    return outcome * clipped.log() + (1.0 - outcome) * (1.0 - clipped).log()
