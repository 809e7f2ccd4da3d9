"""Bets (buy fills) with their implied forecast and, once the market resolved, their scores.

A bet is scored at the moment it was placed: its implied forecast (in both readings, ``fa`` and
``kelly``, see ``arena.scoring.rules.scores``) against what happened,
and the market's own forecast (the price the bet filled at) on the same bet, so "beats the
market" is measured on exactly the same questions. Bets later sold still count: the forecast
was made. Voided markets are left out of scores; 50-50 markets score against y = 0.5 and
count neither as won nor lost.
"""

from __future__ import annotations

import polars as pl
from polars.expr.whenthen import ChainedThen, Then

from arena.scoring.load.frames import BUY, READINGS, Reading, ScoringFrames, suffixed
from arena.scoring.rules.scores import (
    brier,
    implied_probability,
    side_outcome,
    toward_yes,
)

DECISIVE = ("YES", "NO", "OUTCOME")
# Days from bet to resolution; the last bucket takes everything longer.
HORIZONS: tuple[tuple[float, str], ...] = ((7, "<=7d"), (30, "<=30d"), (90, "<=90d"))
LONGER = ">90d"
SECONDS_PER_DAY = 86_400.0


def scored_bets(frames: ScoringFrames) -> pl.DataFrame:
    """One row per bet: implied forecasts, market forecast, and (resolved bets) y, Brier, win, horizon.

    Columns added to the fill columns, per reading (``fa`` unsuffixed, ``kelly`` with
    ``_kelly``): ``confidence`` (the implied P(side)), ``brier``, ``forecast_yes`` and
    ``incoherent`` (P(side) below the price paid: ``incoherent``); and
    ``resolution``, ``resolved_at``, ``y`` (null: unresolved or void), ``scored`` (y known),
    ``decisive`` (YES/NO/OUTCOME), ``won`` (null unless decisive), ``brier_market``,
    ``outcome_yes`` (with ``forecast_yes`` the pair calibration uses: YES-oriented for binary
    bets, the side for multi-outcome ones), ``horizon_days``, ``horizon`` and ``hold_pnl``
    (float dollars the bet made or would have made held to resolution, sells ignored; 0 on a void).
    """
    resolutions = frames.resolutions.rename({"kind": "resolution"})
    bets = frames.fills.filter(pl.col("kind") == BUY).join(
        resolutions, on="market_id", how="left", maintain_order="left"
    )
    y = pl.col("y")
    return (
        bets.with_columns(
            *(implied_probability(r).alias(suffixed("confidence", r)) for r in READINGS), y=side_outcome()
        )
        .with_columns(
            *(brier(pl.col(suffixed("confidence", r)), y).alias(suffixed("brier", r)) for r in READINGS),
            *(
                toward_yes(pl.col(suffixed("confidence", r))).alias(suffixed("forecast_yes", r))
                for r in READINGS
            ),
            *(incoherent(r).alias(suffixed("incoherent", r)) for r in READINGS),
            scored=y.is_not_null(),
            decisive=pl.col("resolution").is_in(DECISIVE),
            won=pl.when(pl.col("resolution").is_in(DECISIVE)).then(y == 1.0),
            brier_market=brier(pl.col("price"), y),
            outcome_yes=toward_yes(y),
            horizon_days=(pl.col("resolved_at") - pl.col("filled_at")).dt.total_seconds() / SECONDS_PER_DAY,
            hold_pnl=_hold_pnl(),
        )
        .with_columns(horizon=horizon_bucket(pl.col("horizon_days")))
    )


def incoherent(reading: Reading) -> pl.Expr:
    """Whether ``reading`` reads the bet as less likely than the price paid for it: P(side) below
    the fill price. Nobody rational buys at 0.85 a side they believe 20% likely, so such a reading
    contradicts the bet it reads. The Kelly reading, p + φ·(1 − p), never does (it starts from p)."""
    return pl.col(suffixed("confidence", reading)) < pl.col("price")


def horizon_bucket(days: pl.Expr) -> pl.Expr:
    """The horizon label of a number of days (null stays null)."""
    expr: Then | ChainedThen = pl.when(days.is_null()).then(None)
    for limit, label in HORIZONS:
        expr = expr.when(days <= limit).then(pl.lit(label))
    return expr.otherwise(pl.lit(LONGER))


def _hold_pnl() -> pl.Expr:
    shares = pl.col("shares").cast(pl.Float64)
    amount = pl.col("amount").cast(pl.Float64)
    return (
        pl.when(pl.col("resolution") == "VOID")
        .then(0.0)
        .when(pl.col("y").is_not_null())
        .then(shares * pl.col("y") - amount)
    )
