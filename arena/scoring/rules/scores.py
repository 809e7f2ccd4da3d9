"""Row-wise scoring rules as polars expressions: one definition, used by every aggregate.

The outcome of a forecast is a number ``y``: 1 if the forecast outcome won, 0 if it lost, and
0.5 when the market resolved 50-50 (each side paid half). Voided markets have no ``y`` and are
left out of every score. With ``y`` in {0, 0.5, 1} the rules below are the usual ones:

- Brier ``(f − y)²``: 0 perfect, 0.25 for always 50%, 1 worst.
- Log score ``y·ln f + (1 − y)·ln(1 − f)`` (natural log, higher is better, 0 perfect): the log
  of the probability given to what happened. ``f`` is clipped into [LOG_CLIP, 1 − LOG_CLIP]
  first, so one stated 0% does not make a whole average −∞ (a 0.1% floor, as Metaculus uses).

A bet implies a probability of its side in two readings (``READINGS``), both kept per bet:

- ``fa`` (Forecaster Arena's bet-size rule): implied confidence ``c = amount / max_bet`` of the
  decision, P(side) = c.
- ``kelly``: P(side) = p + φ·(1 − p), with p the side's fill price and φ = amount / cash at the
  decision's start: the belief at which the stake is the full-Kelly one.

The probability of YES implied by a binary bet is P(side) for a YES bet and ``1 − P(side)`` for
a NO bet; Brier ``(f_YES − y_YES)²`` equals ``(P(side) − y_side)²``, the multi-outcome rule.
The formulas themselves are ``portfolio.metrics``' kernels, applied here to whole columns.
"""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import Reading
from portfolio import metrics

LOG_CLIP = 1e-3
YES, NO = "YES", "NO"


def _money(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Float64)


def implied_probability(reading: Reading) -> pl.Expr:
    """P(side) a bet implies in ``reading``, from the fill columns (see the module docstring)."""
    if reading == "fa":
        return metrics.stake_ratio(_money("amount"), _money("max_bet"))
    return metrics.kelly_probability(
        pl.col("price"), metrics.stake_ratio(_money("amount"), _money("cash_at_start"))
    )


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
    return pl.when(pl.col(outcome) == NO).then(metrics.complement(value)).otherwise(value)


def brier(forecast: pl.Expr, outcome: pl.Expr) -> pl.Expr:
    return metrics.squared_error(forecast, outcome)


def log_score(forecast: pl.Expr, outcome: pl.Expr) -> pl.Expr:
    clipped = forecast.clip(LOG_CLIP, 1.0 - LOG_CLIP)
    return outcome * clipped.log() + (1.0 - outcome) * (1.0 - clipped).log()


def per_market_weight() -> pl.Expr:
    """1 / the number of an agent's events on a market (rows per cohort, agent and market): the
    weight under which each market counts once in a mean over events, however many of its
    outcomes are events (a multi-outcome market's n outcomes share one market's weight)."""
    return 1.0 / pl.len().over("cohort_id", "agent", "market_id").cast(pl.Float64)
