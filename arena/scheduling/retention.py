"""``arena db prune``: delete the rows a live deployment piles up and nothing reads back.

What goes, each past its own retention (``Retention``; the defaults are documented in
docs/live-operation.md):

- ``job_run``: runs of ``arena serve``'s periodic jobs, except each job's latest (``arena
  status`` shows it); the audit rows of replays and operator resolutions stay;
- ``work_unit``: finished units (done or failed), a decision unit only once its round is over;
- ``market_snapshot``: prices of markets no cohort ever offered in a round or held, and closed
  (or resolved) before the cutoff, so no future round can offer them; the latest snapshot of
  each such market and source stays, so "the last price" of every market is unchanged;
- ``serve_process`` and ``worker``: processes stopped, or silent, before the cutoff.

Never touched: cohorts, agents, rounds and what they offered, decisions, provider requests,
fills, positions, marks, resolutions, markets, and every price of a market a cohort offered or
held. Scores, leaderboards, reports and replays read only those (the prune test proves it
byte for byte on both backends). Deletes run in batches, each its own transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Engine, and_, delete, exists, func, or_, select
from sqlalchemy.orm import aliased
from sqlmodel import col

from arena.db.engine import session_scope
from arena.db.models import (
    JobRunRow,
    MarketRow,
    MarketSnapshotRow,
    PositionRow,
    ResolutionRow,
    RoundMarketRow,
    RoundRow,
    ServeProcessRow,
    WorkerRow,
    WorkUnitRow,
)
from arena.db.statuses import FINISHED_ROUND_STATUSES
from arena.scheduling.timetable import JOB_HELP

BATCH = 5_000  # rows a delete transaction removes at most


@dataclass(frozen=True, slots=True)
class Retention:
    """How long each kind of row is kept (counted back from now)."""

    job_runs: timedelta = timedelta(days=30)
    units: timedelta = timedelta(days=7)
    snapshots: timedelta = timedelta(days=30)
    processes: timedelta = timedelta(days=7)


Where = Callable[[datetime, Retention], ColumnElement[bool]]


def _job_runs(now: datetime, keep: Retention) -> ColumnElement[bool]:
    latest = (
        select(func.max(JobRunRow.id)).where(col(JobRunRow.job).in_(JOB_HELP)).group_by(col(JobRunRow.job))
    )
    return and_(
        col(JobRunRow.job).in_(JOB_HELP),
        col(JobRunRow.started_at) < now - keep.job_runs,
        col(JobRunRow.id).not_in(latest.scalar_subquery()),
    )


def _units(now: datetime, keep: Retention) -> ColumnElement[bool]:
    round_over = exists().where(
        col(RoundRow.cohort_id) == col(WorkUnitRow.cohort_id),
        col(RoundRow.round_index) == col(WorkUnitRow.round_index),
        col(RoundRow.status).in_(FINISHED_ROUND_STATUSES),
    )
    return and_(
        col(WorkUnitRow.state).in_(("done", "failed")),
        col(WorkUnitRow.finished_at) < now - keep.units,
        or_(col(WorkUnitRow.kind) != "decision", round_over),
    )


def _snapshots(now: datetime, keep: Retention) -> ColumnElement[bool]:
    cutoff = now - keep.snapshots
    newer = aliased(MarketSnapshotRow)
    closed = select(col(MarketRow.id)).where(col(MarketRow.close_time) < cutoff)
    resolved = select(col(ResolutionRow.market_id)).where(col(ResolutionRow.resolved_at) < cutoff)
    return and_(
        col(MarketSnapshotRow.observed_at) < cutoff,
        or_(col(MarketSnapshotRow.market_id).in_(closed), col(MarketSnapshotRow.market_id).in_(resolved)),
        col(MarketSnapshotRow.market_id).not_in(select(col(RoundMarketRow.market_id))),
        col(MarketSnapshotRow.market_id).not_in(select(col(PositionRow.market_id))),
        exists().where(  # a later price of the same market and source: the latest one stays
            col(newer.market_id) == col(MarketSnapshotRow.market_id),
            col(newer.source) == col(MarketSnapshotRow.source),
            col(newer.observed_at) > col(MarketSnapshotRow.observed_at),
        ),
    )


def _gone(model: type[ServeProcessRow] | type[WorkerRow]) -> Where:
    def where(now: datetime, keep: Retention) -> ColumnElement[bool]:
        cutoff = now - keep.processes
        return or_(col(model.stopped_at) < cutoff, col(model.heartbeat_at) < cutoff)

    return where


# Table name -> (the rows to delete, the key that batches their deletes).
TABLES: dict[str, tuple[Any, Where, Any]] = {
    "job_run": (JobRunRow, _job_runs, JobRunRow.id),
    "work_unit": (WorkUnitRow, _units, WorkUnitRow.id),
    "market_snapshot": (MarketSnapshotRow, _snapshots, MarketSnapshotRow.id),
    "serve_process": (ServeProcessRow, _gone(ServeProcessRow), ServeProcessRow.owner),
    "worker": (WorkerRow, _gone(WorkerRow), WorkerRow.name),
}


def prunable(engine: Engine, now: datetime, keep: Retention) -> dict[str, int]:
    """How many rows of each table a prune at ``now`` would delete (deletes nothing)."""
    with session_scope(engine, write=False) as session:
        return {
            name: int(
                session.execute(select(func.count()).select_from(model).where(where(now, keep))).scalar_one()
            )
            for name, (model, where, _) in TABLES.items()
        }


def prune(engine: Engine, now: datetime, keep: Retention) -> dict[str, int]:
    """Delete what ``prunable`` counts, ``BATCH`` rows a transaction; how many went, per table."""
    deleted: dict[str, int] = {}
    for name, (model, where, key) in TABLES.items():
        deleted[name] = 0
        while True:
            with session_scope(engine) as session:
                keys = list(session.execute(select(key).where(where(now, keep)).limit(BATCH)).scalars())
                if keys:
                    session.execute(delete(model).where(col(key).in_(keys)))
            deleted[name] += len(keys)
            if len(keys) < BATCH:
                break
    return deleted
