"""Scoring: pure functions from the stored log (as polars frames) to leaderboards and statistics.

Nothing here stores state: ``load_frames`` reads the log from the database, everything else
computes from the frames, so any number can be recomputed from the log at any time (and, with
``ScoringFrames.as_of``, as it stood at any past moment).

Typical use::

    frames = load_frames(engine, ["cohort-1"])
    table = leaderboard(frames, by="brier", seed=0, replicates=2000)
    bins = calibration_table(frames, "stated")
"""

from arena.scoring.board.export import Settings, leaderboard_document
from arena.scoring.board.ranking import COLUMNS, SORTABLE, leaderboard
from arena.scoring.board.tables import calibration_summary, calibration_table, forecast_pairs
from arena.scoring.load.database import load_frames
from arena.scoring.load.frame_spec import FrameError, FrameSpec
from arena.scoring.load.frames import SPECS, ScoringFrames
from arena.scoring.load.rows import LoadError
from arena.scoring.metrics.registry import METRICS
from arena.scoring.metrics.spec import Metric, Ratio
from arena.scoring.rules.bets import scored_bets
from arena.scoring.rules.breakdowns import breakdowns
from arena.scoring.rules.calibration import murphy, reliability_table
from arena.scoring.rules.risk import daily_returns, risk_metrics
from arena.scoring.rules.stated import event_scores, standing_forecasts
from arena.scoring.rules.tournament import tournament_standings
from arena.scoring.stats.bootstrap import replicate_weights

__all__ = [
    "COLUMNS",
    "METRICS",
    "SORTABLE",
    "SPECS",
    "FrameError",
    "FrameSpec",
    "LoadError",
    "Metric",
    "Ratio",
    "ScoringFrames",
    "Settings",
    "breakdowns",
    "calibration_summary",
    "calibration_table",
    "daily_returns",
    "event_scores",
    "forecast_pairs",
    "leaderboard",
    "leaderboard_document",
    "load_frames",
    "murphy",
    "reliability_table",
    "replicate_weights",
    "risk_metrics",
    "scored_bets",
    "standing_forecasts",
    "tournament_standings",
]
