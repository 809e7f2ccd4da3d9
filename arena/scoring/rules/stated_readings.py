"""The complete stated readings of every agent, as one per-agent frame the leaderboard joins.

Gathers what ``imputed`` (every offered round and market, missing forecasts at the market price;
Autocast-normalised Brier; what was left unstated, and hidden prices stated), ``provisional``
(stated markets not resolved yet) and ``guards`` (leakage guard, rounds before the knowledge
cutoff) compute. ``STATED_COLUMNS`` are its columns besides ``agent``;
``stated_interval_columns`` adds the intervals and comparisons once the table is ranked.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.guards import guard_metrics
from arena.scoring.rules.imputed import (
    autocast_market_scores,
    hidden_price_metrics,
    imputed_event_scores,
    imputed_metrics,
)
from arena.scoring.rules.provisional import provisional_events, provisional_metrics

STATED_COLUMNS = (
    "imputed_share",
    "imputed_events",
    "unstated_share",
    "hidden_price_share",
    "hidden_price_seen",
    "stated_brier_autocast",
    "provisional_events",
    "stated_brier_provisional",
    "leakage_guard",
    "rounds_before_cutoff",
)


@dataclass(frozen=True)
class StatedReadings:
    """``imputed_events``: per (cohort, agent, market, outcome) scores over the rounds offered;
    ``provisional``: per stated event not resolved yet, its Brier against the latest price;
    ``per_agent``: ``agent`` and ``STATED_COLUMNS``, one row per agent of the roster."""

    imputed_events: pl.DataFrame
    provisional: pl.DataFrame
    per_agent: pl.DataFrame


def stated_readings(frames: ScoringFrames) -> StatedReadings:
    events = imputed_event_scores(frames)
    open_events = provisional_events(frames)
    roster = frames.agents.select("agent").unique().sort("agent")
    parts = (
        imputed_metrics(events, autocast_market_scores(events)),
        hidden_price_metrics(frames),
        provisional_metrics(open_events),
        guard_metrics(frames),
    )
    table = roster
    for part in parts:
        table = table.join(part, on="agent", how="left", maintain_order="left")
    counts = [pl.col(c).fill_null(0) for c in ("imputed_events", "provisional_events")]
    return StatedReadings(events, open_events, table.with_columns(counts).select("agent", *STATED_COLUMNS))
