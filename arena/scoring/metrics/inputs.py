"""What every per-agent metric is computed from: the frames and the row-level tables derived once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import polars as pl

from arena.scoring.load.frames import READINGS, ScoringFrames
from arena.scoring.rules.bets import scored_bets
from arena.scoring.rules.difficulty import CELL, PANELS, Panel, bet_cells, stated_cells
from arena.scoring.rules.stated import event_scores, standing_forecasts
from arena.scoring.rules.stated_readings import StatedReadings, stated_readings


@dataclass(frozen=True)
class Inputs:
    """The frames plus the per-bet and per-event tables, built once per leaderboard.

    ``bets`` are ``scored_bets`` (every bet, both implied readings), ``standing`` the standing
    statements and ``events`` their per-event scores, ``readings`` the complete stated readings
    (every offered round and market, ``arena.scoring.rules.stated_readings``); ``min_markets`` is the
    leaderboard's setting that some metrics read.
    """

    frames: ScoringFrames
    bets: pl.DataFrame
    standing: pl.DataFrame
    events: pl.DataFrame
    readings: StatedReadings
    min_markets: int

    @property
    def pooled(self) -> bool:
        """Whether the frames pool several cohorts (what the difficulty adjustment is for)."""
        return self.frames.agents["cohort_id"].n_unique() > 1

    @cached_property
    def difficulty_cells(self) -> dict[Panel, pl.DataFrame]:
        """The (forecaster, market) Brier cells the difficulty adjustment fits, per panel
        (``arena.scoring.rules.difficulty``), empty unless ``pooled``: built once, read by the point
        estimates and the bootstrap."""
        if not self.pooled:
            return dict.fromkeys(PANELS, pl.DataFrame(schema=CELL))
        cells: dict[Panel, pl.DataFrame] = {"stated": stated_cells(self.events, self.frames)}
        return cells | {reading: bet_cells(self.bets, reading) for reading in READINGS}

    @classmethod
    def of(cls, frames: ScoringFrames, *, min_markets: int) -> Inputs:
        standing = standing_forecasts(frames)
        events = event_scores(standing)
        return cls(frames, scored_bets(frames), standing, events, stated_readings(frames), min_markets)
