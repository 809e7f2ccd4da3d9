"""What ``arena status`` reports: per job, last and next run, last outcome, recent failures."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, func, inspect, text
from sqlmodel import select

from arena.core.settings import Settings
from arena.db.engine import session_scope
from arena.db.models import JobRunRow
from arena.scheduling.timetable import JOBSTORE_TABLE, job_timings


@dataclass(frozen=True, slots=True)
class JobStatus:
    name: str
    help: str
    every: timedelta
    last_started: datetime | None
    last_ok: bool | None
    last_message: str
    next_run: datetime | None
    failures_24h: int


def job_statuses(engine: Engine, now: datetime, settings: Settings | None = None) -> list[JobStatus]:
    """One row per known job, from ``job_run`` and the scheduler's persisted next run times
    (cadences as this process's ``settings`` say, by default from the environment)."""
    next_runs = _next_runs(engine)
    out = []
    with session_scope(engine, write=False) as session:
        for spec in job_timings(settings or Settings()).values():
            last = session.exec(
                select(JobRunRow).where(JobRunRow.job == spec.name).order_by(JobRunRow.started_at.desc())  # type: ignore[attr-defined]
            ).first()
            failures = session.exec(
                select(func.count())
                .select_from(JobRunRow)
                .where(
                    JobRunRow.job == spec.name,
                    JobRunRow.ok.is_(False),  # type: ignore[union-attr]
                    JobRunRow.started_at >= now - timedelta(days=1),
                )
            ).one()
            out.append(
                JobStatus(
                    name=spec.name,
                    help=spec.help,
                    every=spec.every,
                    last_started=last.started_at if last else None,
                    last_ok=last.ok if last else None,
                    last_message=last.message if last else "",
                    next_run=next_runs.get(spec.name),
                    failures_24h=int(failures),
                )
            )
    return out


def _next_runs(engine: Engine) -> dict[str, datetime]:
    """Next run times APScheduler persisted (epoch seconds); empty before the first ``serve``."""
    if not inspect(engine).has_table(JOBSTORE_TABLE):
        return {}
    with engine.connect() as conn:
        rows = conn.execute(text(f"SELECT id, next_run_time FROM {JOBSTORE_TABLE}")).all()
    return {job_id: datetime.fromtimestamp(ts, UTC) for job_id, ts in rows if ts is not None}
