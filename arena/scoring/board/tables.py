"""Per-agent tables beside the leaderboard, for the dashboard, reports and ``--json``."""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.metrics.summary import SOURCES, Source, source_pairs
from arena.scoring.rules.bets import scored_bets
from arena.scoring.rules.calibration import murphy, reliability_table
from arena.scoring.rules.stated import standing_forecasts

__all__ = [
    "SOURCES",
    "Source",
    "calibration_summary",
    "calibration_table",
    "forecast_pairs",
    "reliability_of",
]


def forecast_pairs(frames: ScoringFrames, source: Source) -> pl.DataFrame:
    """Forecast/outcome/weight pairs of resolved forecasts: from bets (in a reading) or statements."""
    if source == "stated":
        return source_pairs(pl.DataFrame(), standing_forecasts(frames), source)
    return source_pairs(scored_bets(frames), pl.DataFrame(), source)


def calibration_table(frames: ScoringFrames, source: Source = "implied") -> pl.DataFrame:
    """Reliability table per agent: bin, lower, upper, count, weight, mean_forecast, observed, gap."""
    return reliability_of(forecast_pairs(frames, source))


def reliability_of(pairs: pl.DataFrame) -> pl.DataFrame:
    """``calibration_table`` of forecast pairs already made (``summary.source_pairs``)."""
    return reliability_table(pairs, ["agent"]).select(
        "agent", "bin", "lower", "upper", "count", "weight", "mean_forecast", "observed", "gap"
    )


def calibration_summary(frames: ScoringFrames, source: Source = "implied") -> pl.DataFrame:
    """Murphy decomposition and ECE per agent (see ``arena.scoring.rules.calibration``)."""
    return murphy(forecast_pairs(frames, source), ["agent"]).sort("agent")
