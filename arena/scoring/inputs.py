"""What every per-agent metric is computed from: the frames and the row-level tables derived once."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from arena.scoring.bets import scored_bets
from arena.scoring.frames import ScoringFrames
from arena.scoring.stated import event_scores, standing_forecasts


@dataclass(frozen=True)
class Inputs:
    """The frames plus the per-bet and per-event tables, built once per leaderboard.

    ``bets`` are ``scored_bets`` (every bet, both implied readings), ``standing`` the standing
    statements and ``events`` their per-event scores; ``prize_pool`` and ``min_markets`` are the
    leaderboard's settings that some metrics read.
    """

    frames: ScoringFrames
    bets: pl.DataFrame
    standing: pl.DataFrame
    events: pl.DataFrame
    prize_pool: float
    min_markets: int

    @classmethod
    def of(cls, frames: ScoringFrames, *, prize_pool: float, min_markets: int) -> Inputs:
        standing = standing_forecasts(frames)
        return cls(frames, scored_bets(frames), standing, event_scores(standing), prize_pool, min_markets)
