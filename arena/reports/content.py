"""Everything a cohort report says, read once in one consistent snapshot of the database.

``gather`` reads the cohort's log tables (``log_tables``) and its scores (``arena.scoring``) in
one read transaction, so tables, leaderboard and charts describe the same moment even while a
live cohort keeps writing. Every text column is redacted here, before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl
from sqlalchemy import Engine, select
from sqlmodel import col

from arena.cohorts.config import ConfigError, config_from_frozen
from arena.db.engine import session_scope
from arena.db.models import CohortRow
from arena.reports import log_tables
from arena.reports.redact import Redactor
from arena.scoring import (
    ScoringFrames,
    breakdowns,
    calibration_summary,
    calibration_table,
    leaderboard,
    load_frames,
)
from arena.scoring.board.tables import SOURCES, Source
from arena.scoring.load.database import cohort_scoring
from arena.scoring.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_REPLICATES

SORT_BY = "return_pct"


class ReportError(ValueError):
    """A report that cannot be built; the message says what to do (one line)."""


@dataclass(frozen=True)
class ReportContent:
    cohort: dict[str, Any]  # the cohort row (config redacted), plus ``config_hash_verified``
    tables: dict[str, pl.DataFrame]  # name -> frame, exported as Parquet and CSV
    leaderboard: pl.DataFrame
    calibration_summary: pl.DataFrame
    scoring: dict[str, Any]  # how the scores were computed (for the manifest and the notes)


def gather(engine: Engine, cohort_id: str, *, prompts: bool, redactor: Redactor) -> ReportContent:
    """Read the cohort ``cohort_id`` and score it; ``prompts`` keeps raw prompts and responses."""
    with session_scope(engine, write=False) as session:
        connection = session.connection()
        row = connection.execute(select(CohortRow).where(col(CohortRow.id) == cohort_id)).mappings().first()
        if row is None:
            raise ReportError(f"no cohort with id {cohort_id!r} (see `arena cohort list`)")
        cohort = dict(row)
        tables = {
            "agents": log_tables.agents(connection, cohort_id),
            "rounds": log_tables.rounds(connection, cohort_id),
            "decisions": log_tables.decisions(connection, cohort_id, prompts=prompts),
            "tool_calls": log_tables.tool_calls(connection, cohort_id, texts=prompts),
            "llm_requests": log_tables.llm_requests(connection, cohort_id),
            "fills": log_tables.fills(connection, cohort_id),
            "positions": log_tables.positions(connection, cohort_id),
            "portfolio_snapshots": log_tables.portfolio_snapshots(connection, cohort_id),
            "resolutions": log_tables.resolutions(connection, cohort_id),
        }
        frames = load_frames(connection, [cohort_id])
        chosen = cohort_scoring(connection, [cohort_id])
    scores = leaderboard(frames, by=SORT_BY, seed=chosen.seed)
    summary = _by_source(calibration_summary, frames)
    tables |= {
        "scores": scores,
        "calibration": _by_source(calibration_table, frames),
        "breakdowns": breakdowns(frames),
    }
    raw_config = _as_dict(cohort["config_json"])
    cohort["config_hash_verified"] = _hash_matches(raw_config, str(cohort["config_hash"]))
    cohort["config_json"] = redactor.document(raw_config)
    return ReportContent(
        cohort=cohort,
        tables={name: redactor.frame(frame) for name, frame in tables.items()},
        leaderboard=redactor.frame(scores),
        calibration_summary=summary,
        scoring={
            "sort_by": SORT_BY,
            "implied": chosen.implied,
            "bootstrap": {
                "replicates": DEFAULT_REPLICATES,
                "seed": chosen.seed,
                "confidence": DEFAULT_LEVEL,
                "unit": "market",
            },
        },
    )


def _by_source(table: Callable[[ScoringFrames, Source], pl.DataFrame], frames: ScoringFrames) -> pl.DataFrame:
    """``table`` of implied and of stated forecasts, stacked, with a leading ``source`` column."""
    parts = [table(frames, source).with_columns(source=pl.lit(source)) for source in SOURCES]
    return pl.concat(parts).select("source", pl.exclude("source"))


def _hash_matches(config: dict[str, Any], stored: str) -> bool | None:
    """Whether the stored config still hashes to the cohort's ``config_hash`` (None: unreadable)."""
    try:
        return config_from_frozen(config).config_hash() == stored
    except ConfigError:
        return None


def _as_dict(config: Any) -> dict[str, Any]:
    return dict(json.loads(config) if isinstance(config, str) else config)
