"""Who is working: one ``worker`` row per ``arena worker`` process, with its heartbeat.

The roster is for people (``arena status``), not for safety: units are fenced by their own lease
tokens (``arena.workers.queue``), so a worker whose heartbeat went stale can do no harm.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, update
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.models import WorkerRow

# A worker beats every poll when idle and every quarter lease when busy: a minute of silence
# means it is stuck or gone (a killed worker never writes ``stopped_at``).
SILENT_AFTER = timedelta(minutes=1)
WORKING, IDLE, STOPPED, GONE = "working", "idle", "stopped", "gone"


def state_of(row: WorkerRow, now: datetime) -> str:
    """``stopped`` (it said so), ``gone`` (no heartbeat for its lease: killed, stuck or cut off;
    its units go to other workers), else ``working`` or ``idle``."""
    if row.stopped_at is not None:
        return STOPPED
    if now - row.heartbeat_at > silent_limit(row):
        return GONE
    return IDLE if row.unit_id is None else WORKING


def silent_limit(row: WorkerRow) -> timedelta:
    """How long the worker may go without a heartbeat: its lease (a row from before leases were
    recorded: ``SILENT_AFTER``)."""
    return SILENT_AFTER if row.lease_seconds is None else timedelta(seconds=row.lease_seconds)


def join(engine: Engine, name: str, host: str, pid: int, now: datetime, lease: timedelta) -> None:
    """Add the worker; ``lease``: its units' lease, which it beats well within (one silent for
    longer is ``GONE``)."""
    row = WorkerRow(
        name=name, host=host, pid=pid, started_at=now, heartbeat_at=now, lease_seconds=lease.total_seconds()
    )
    with session_scope(engine) as session:
        session.add(row)


def beat(engine: Engine, name: str, now: datetime, unit_id: int | None, *, finished: int = 0) -> None:
    """Record that ``name`` is alive and what it runs; ``finished``: how many more units it did."""
    values: dict[str, object] = {"heartbeat_at": now, "unit_id": unit_id}
    if finished:
        values["units_done"] = col(WorkerRow.units_done) + finished
    with session_scope(engine) as session:
        session.execute(update(WorkerRow).where(col(WorkerRow.name) == name).values(**values))


def leave(engine: Engine, name: str, now: datetime) -> None:
    with session_scope(engine) as session:
        session.execute(
            update(WorkerRow).where(col(WorkerRow.name) == name).values(stopped_at=now, unit_id=None)
        )


def workers(session: Session, *, limit: int = 50) -> list[WorkerRow]:
    """Running workers first, then the most recently stopped."""
    query = select(WorkerRow).order_by(
        col(WorkerRow.stopped_at).is_not(None), col(WorkerRow.heartbeat_at).desc()
    )
    return list(session.exec(query.limit(limit)))


def idle(engine: Engine, now: datetime) -> int:
    """How many workers could take a unit now: live (``live_workers``) and running nothing.
    ``arena serve`` hands its marks, settlement and sync to workers only when one is idle: with
    every worker deep in a long replay, its jobs run in-process instead of waiting behind them."""
    return _live(engine, now, col(WorkerRow.unit_id).is_(None))


def live_workers(engine: Engine, now: datetime) -> int:
    """How many workers have not stopped and beat within ``SILENT_AFTER``: ``arena serve`` plans
    rounds for them when there is any, and runs rounds in-process otherwise."""
    return _live(engine, now)


def _live(engine: Engine, now: datetime, *also: Any) -> int:
    """Live workers matching ``also``. Workers need PostgreSQL, so on SQLite there are none (the
    table is not read)."""
    if engine.dialect.name != "postgresql":
        return 0
    with session_scope(engine, write=False) as session:
        query = select(func.count()).where(
            col(WorkerRow.stopped_at).is_(None), col(WorkerRow.heartbeat_at) >= now - SILENT_AFTER, *also
        )
        return int(session.exec(query).one())
