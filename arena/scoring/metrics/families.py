"""Leaderboard metrics declared by rule rather than one by one: the bet-implied Brier family,
once per reading of a bet as a forecast, and the calibration family, once per forecast source.
``arena.scoring.metrics.registry`` lists them among the other metrics."""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import Reading, suffixed
from arena.scoring.metrics import summary
from arena.scoring.metrics.labels import brier_label
from arena.scoring.metrics.spec import RANDOM_BRIER, Metric, Ratio

INCOHERENT_LIMIT = 0.5
"""A reading whose share of incoherent bets (P(side) below the price paid) is at least this is
flagged: most of the bets its Brier reads contradict the reading itself."""


def reading_metrics(reading: Reading) -> tuple[Metric, ...]:
    """The bet-implied Brier family of one reading."""
    brier = suffixed("brier", reading)
    how = "amount / max bet" if reading == "fa" else "p + φ·(1 − p), φ = amount / cash"
    demoted = (suffixed("brier_incoherent", reading),)
    return (
        Metric(
            suffixed("brier_cohorts_mean", reading),
            "Brier (bets), mean of cohorts",
            "mean over the agent's cohorts of its Brier there, each cohort weighing the same "
            "(Forecaster Arena)",
            "score",
            better="lower",
            reading=reading,
            demoted_by=demoted,
            per_agent=summary.cohort_mean_briers,
        ),
        Metric(
            brier,
            "Brier (bets)",
            f"mean Brier of resolved bets, P(side) = {how}",
            "score",
            better="lower",
            interval=True,
            compared=True,
            headline=True,
            reading=reading,
            demoted_by=demoted,
            reference=RANDOM_BRIER,
            ratio=Ratio("bets", pl.col(brier)),
        ),
        Metric(
            suffixed("brier_label", reading),
            "Brier label",
            f"Forecaster Arena's word for `{brier}` (Perfect … Very Poor)",
            "text",
            reading=reading,
            derive=lambda _: brier_label(pl.col(brier)),
        ),
        Metric(
            suffixed("bss_random", reading),
            "Skill vs 50%",
            f"1 − {brier} / 0.25 (always saying 50%)",
            "score",
            better="higher",
            interval=True,
            reading=reading,
            demoted_by=demoted,
            ratio=Ratio("bets", pl.col(brier), skill=True, reference=RANDOM_BRIER),
        ),
        *(
            ()
            if reading != "fa"
            else (
                Metric(
                    "brier_market",
                    "Market Brier",
                    "mean Brier of the fill prices of the same bets",
                    "score",
                    ratio=Ratio("bets", pl.col("brier_market")),
                ),
            )
        ),
        Metric(
            suffixed("bss_market", reading),
            "Skill vs market",
            f"1 − {brier} / the market's Brier on the same bets",
            "score",
            better="higher",
            interval=True,
            headline=reading == "fa",
            reading=reading,
            demoted_by=demoted,
            reference=0.0,
            ratio=Ratio("bets", pl.col(brier), pl.col("brier_market"), skill=True),
        ),
        Metric(
            suffixed("incoherent_share", reading),
            "Incoherent bets",
            "share of the resolved bets read as less likely than the price paid (P(side) < price)",
            "share",
            interval=True,
            headline=reading == "fa",
            reading=reading,
            ratio=Ratio("bets", pl.col(suffixed("incoherent", reading)).cast(pl.Float64)),
        ),
        Metric(
            suffixed("brier_incoherent", reading),
            "Reading incoherent",
            f"at least {INCOHERENT_LIMIT:.0%} of its bets incoherent: `{brier}` and its skills say "
            "nothing about these bets (flagged in every view)",
            "flag",
            reading=reading,
            derive=lambda _: incoherent_flag(reading),
        ),
    )


def incoherent_flag(reading: Reading) -> pl.Expr:
    """True when the reading's incoherent share reaches ``INCOHERENT_LIMIT`` (null: no resolved bet)."""
    return pl.col(suffixed("incoherent_share", reading)) >= INCOHERENT_LIMIT


def calibration_metrics() -> tuple[Metric, ...]:
    words = {
        "ece": ("ECE", "expected calibration error over 10 bins"),
        "reliability": ("Reliability", "Murphy reliability (miscalibration, lower is better)"),
        "resolution": ("Resolution", "Murphy resolution (discrimination, higher is better)"),
        "uncertainty": ("Uncertainty", "Murphy uncertainty: the outcomes' variance"),
    }
    return tuple(
        Metric(
            summary.calibration_key(source, part),
            f"{label} ({source.split('_')[0]})",
            f"{text}, "
            + (
                "stated probabilities"
                if source == "stated"
                else f"bet-implied forecasts ({source.replace('implied_', '') if '_' in source else 'fa'})"
            ),
            "score",
            reading=summary.IMPLIED_SOURCES.get(source),
            per_agent=summary.calibration_metrics,
        )
        for source in summary.SOURCES
        for part, (label, text) in words.items()
    )
