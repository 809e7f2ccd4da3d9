"""Who serves: one ``serve_process`` row per ``arena serve`` process, leader or standby.

Each process writes its row when it starts (with the settings it runs with: the job cadences,
the leader lease, the sync's selection), beats in it at every lease check, and marks it stopped
when it exits cleanly. ``arena status`` reads it to show the standbys, which hold no lease row,
and each job's cadence as the leading process recorded it. Like the workers' roster, it is for
people, never for safety: the lease and its fence decide who may write.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, update
from sqlmodel import col, select

from arena.core.settings import Settings
from arena.db.engine import session_scope
from arena.db.models import ServeProcessRow
from arena.db.upsert import insert_ignore
from arena.scheduling.timetable import job_timings


def recorded_settings(settings: Settings) -> dict[str, Any]:
    """What ``arena serve`` runs with, as stored in its row: cadences and durations in seconds."""
    return {
        "every": {name: t.every.total_seconds() for name, t in job_timings(settings).items()},
        "leader_lease": settings.leader_lease.total_seconds(),
        "misfire_grace": settings.misfire_grace.total_seconds(),
        "sync": settings.sync_selection(),
    }


def join(engine: Engine, owner: str, host: str, pid: int, now: datetime, settings: Settings) -> None:
    """Record this process (again after an outage: the first write stays)."""
    row = {
        "owner": owner,
        "host": host,
        "pid": pid,
        "started_at": now,
        "heartbeat_at": now,
        "lease_seconds": settings.leader_lease.total_seconds(),
        "settings_json": recorded_settings(settings),
    }
    with session_scope(engine) as session:
        insert_ignore(session, ServeProcessRow, [row], on=("owner",))


def beat(engine: Engine, owner: str, now: datetime) -> None:
    with session_scope(engine) as session:
        session.execute(
            update(ServeProcessRow).where(col(ServeProcessRow.owner) == owner).values(heartbeat_at=now)
        )


def leave(engine: Engine, owner: str, now: datetime) -> None:
    with session_scope(engine) as session:
        session.execute(
            update(ServeProcessRow).where(col(ServeProcessRow.owner) == owner).values(stopped_at=now)
        )


@dataclass(frozen=True, slots=True)
class ServeProcess:
    """A serve process as ``arena status`` shows it."""

    owner: str
    host: str
    pid: int
    started_at: datetime
    heartbeat_at: datetime
    lease: timedelta
    settings: dict[str, Any]

    def alive(self, now: datetime) -> bool:
        """Beat within its lease: a process silent for longer is gone (killed, or cut off)."""
        return now - self.heartbeat_at <= self.lease

    def leads_as(self, lease_owner: str) -> bool:
        """Whether the lease owner token is one of this process's tenures (``owner``, ``owner/2``…)."""
        return lease_owner == self.owner or lease_owner.startswith(f"{self.owner}/")


def running(engine: Engine, *, limit: int = 50) -> list[ServeProcess]:
    """Serve processes not stopped, the most recently heard from first."""
    with session_scope(engine, write=False) as session:
        rows = session.exec(
            select(ServeProcessRow)
            .where(col(ServeProcessRow.stopped_at).is_(None))
            .order_by(col(ServeProcessRow.heartbeat_at).desc())
            .limit(limit)
        ).all()
    return [
        ServeProcess(
            r.owner,
            r.host,
            r.pid,
            r.started_at,
            r.heartbeat_at,
            timedelta(seconds=r.lease_seconds),
            r.settings_json,
        )
        for r in rows
    ]


def latest_settings(engine: Engine) -> dict[str, Any] | None:
    """The settings the most recently started serve process recorded (stopped or not), or None."""
    with session_scope(engine, write=False) as session:
        row = session.exec(
            select(ServeProcessRow.settings_json).order_by(col(ServeProcessRow.started_at).desc()).limit(1)
        ).first()
    return None if row is None else dict(row)
