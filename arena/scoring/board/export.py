"""The leaderboard as a JSON document with stable keys (``arena leaderboard --json``).

Top-level keys: ``schema_version``, ``cohorts``, ``cohort_selection`` (``latest``: no cohort
named, the newest alone; ``all``: every cohort that ran, pooled; ``named``), ``cohorts_left_out``
(``cohort``, ``status`` of each cohort ``all`` did not pool), ``as_of``, ``sort_by``, ``bootstrap``
(``replicates``, ``seed``, ``confidence``, ``unit``), ``min_markets``, ``prize_pool`` (the
cohorts' ``[tournament]`` pools, summed),
``implied`` (the bet-implied reading the headline "Brier (bets)" uses: ``fa`` or ``kelly``),
``pool_by`` (``name`` or ``model``: what a row is across cohorts),
``agents`` (one object per leaderboard row, keys = ``leaderboard.COLUMNS``; a replicated agent's
row is the mean of its replicates, ``replicates`` > 1), ``footnotes`` (``leaderboard_notes``:
labels that disagree, readings that contradict their bets, a tournament only one agent covered),
``breakdowns`` (rows of ``breakdowns.breakdowns``), ``calibration`` (reliability rows per source:
``implied``, ``implied_kelly``, ``stated``) and ``replicate_rows`` (each replicate's own row, same
keys, ranked among themselves; empty when no agent is replicated). Dollar amounts are numbers
rounded to the cent (model cost: to 1e-6 dollars); times are ISO 8601 UTC strings; a missing value
is ``null``. Keys are only ever added; a removal or a change of meaning bumps ``schema_version``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import polars as pl

from arena.scoring.board.notes import leaderboard_notes
from arena.scoring.board.ranking import MIN_MARKETS, leaderboard_inputs, ranked
from arena.scoring.board.tables import SOURCES, calibration_table, reliability_of
from arena.scoring.load.cohort_choice import CohortChoice
from arena.scoring.load.frames import Reading, ScoringFrames
from arena.scoring.metrics.inputs import Inputs
from arena.scoring.metrics.summary import Source, source_pairs
from arena.scoring.rules.breakdowns import breakdowns
from arena.scoring.rules.tournament import prize_pool
from arena.scoring.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_REPLICATES
from arena.scoring.stats.pooling import PoolBy

SCHEMA_VERSION = 3
# 2: tournament_take is S / ΣS (the Metaculus tournament rules); tournament_share removed.
# 3: stated scores null for an agent that never stated; stated means weigh each market once;
#    share_better counts strict wins (ties apart: wins, ties, losses); p_value null below
#    min_markets or without bootstrap variance (p_value_reason says why); incoherent_share and
#    brier_incoherent added; a tournament only one agent covers pays e^s / (1 + e^s).
CENT = Decimal("0.01")
MICRO = Decimal("0.000001")
FINE_MONEY = frozenset({"cost", "cost_per_decision"})


@dataclass(frozen=True)
class Settings:
    """What a leaderboard was computed with; echoed in the document so it can be reproduced."""

    by: str = "return_pct"
    seed: int = 0
    replicates: int = DEFAULT_REPLICATES
    level: float = DEFAULT_LEVEL
    min_markets: int = MIN_MARKETS
    implied: Reading = "fa"
    pool_by: PoolBy = "name"


def leaderboard_document(
    frames: ScoringFrames,
    settings: Settings,
    *,
    cohorts: list[str],
    as_of: datetime | None,
    choice: CohortChoice | None = None,
) -> dict[str, Any]:
    """Everything ``arena leaderboard --json`` prints, from frames already narrowed to ``cohorts``
    (chosen as ``choice`` says; default: named by the caller)."""
    inputs = leaderboard_inputs(frames, settings.min_markets)
    table, copies = ranked(
        inputs, by=settings.by, seed=settings.seed, replicates=settings.replicates, level=settings.level
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "cohorts": cohorts,
        **(choice or CohortChoice(tuple(cohorts), "named")).json(),
        "as_of": None if as_of is None else as_of.isoformat(),
        "sort_by": settings.by,
        "bootstrap": {
            "replicates": settings.replicates,
            "seed": settings.seed,
            "confidence": settings.level,
            "unit": "market",
        },
        "min_markets": settings.min_markets,
        "prize_pool": json_value("prize_pool", prize_pool(frames)),
        "implied": settings.implied,
        "pool_by": settings.pool_by,
        "agents": rows(table),
        "footnotes": leaderboard_notes(table, settings.implied),
        "breakdowns": rows(breakdowns(frames)),
        "calibration": {source: rows(_calibration(frames, inputs, source)) for source in SOURCES},
        "replicate_rows": rows(copies),
    }


def _calibration(frames: ScoringFrames, inputs: Inputs, source: Source) -> pl.DataFrame:
    """``calibration_table(frames, source)``, from the leaderboard's own bets and statements when
    they are the frames' (one cohort: ``decided_seats`` kept every seat), instead of again."""
    if inputs.frames is not frames:
        return calibration_table(frames, source)
    return reliability_of(source_pairs(inputs.bets, inputs.standing, source))


def rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as JSON-ready dicts (see the module docstring for the value rules)."""
    return [
        {key: json_value(key, value) for key, value in row.items()} for row in frame.iter_rows(named=True)
    ]


def json_value(key: str, value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value.quantize(MICRO if key in FINE_MONEY else CENT))
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, datetime):
        return value.isoformat()
    return value
