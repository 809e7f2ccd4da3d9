"""What ``arena status`` reports per job: last finished run and its outcome, the run in progress,
the next run time, the failures of the last day, and the cadence the serving process recorded.

Cadences come from the ``serve_process`` row of the leader (or the latest serve process), never
from the environment of the process asking: ``arena status`` on a laptop must show what the
server runs with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, func, inspect, text
from sqlmodel import col, select

from arena.db.engine import session_scope
from arena.db.models import JobRunRow
from arena.scheduling.runs import FAILED, OK, PARTIAL
from arena.scheduling.timetable import JOB_HELP, JOBSTORE_TABLE


@dataclass(frozen=True, slots=True)
class JobStatus:
    name: str
    help: str
    every: timedelta | None  # as recorded by the serving process; None before any recorded it
    last_started: datetime | None  # the latest finished run
    outcome: str | None  # ok | partial | failed; None before a run finished
    last_message: str
    warnings: tuple[str, ...]
    running_since: datetime | None  # a claimed run not finished yet (or abandoned: see docs)
    next_run: datetime | None
    failures_24h: int  # runs not ok (failed or partial) started in the last day

    @property
    def last_ok(self) -> bool | None:
        return None if self.outcome is None else self.outcome == OK

    def lag(self, now: datetime) -> timedelta:
        """How late the next run is (zero when it is not due yet, or unknown)."""
        return max(now - self.next_run, timedelta(0)) if self.next_run else timedelta(0)


def job_statuses(
    engine: Engine, now: datetime, cadences: Mapping[str, timedelta] | None = None
) -> list[JobStatus]:
    """One row per job, from ``job_run`` and the scheduler's persisted next run times;
    ``cadences``: each job's cadence as the serving process recorded it (none: unknown)."""
    next_runs = _next_runs(engine)
    with session_scope(engine, write=False) as session:
        out = []
        for name, help in JOB_HELP.items():
            runs = select(JobRunRow).where(JobRunRow.job == name).order_by(col(JobRunRow.started_at).desc())
            last = session.exec(runs.where(col(JobRunRow.finished_at).is_not(None)).limit(1)).first()
            latest = session.exec(runs.limit(1)).first()
            failures = session.exec(
                select(func.count())
                .select_from(JobRunRow)
                .where(
                    JobRunRow.job == name,
                    col(JobRunRow.ok).is_(False),
                    JobRunRow.started_at >= now - timedelta(days=1),
                )
            ).one()
            out.append(
                JobStatus(
                    name=name,
                    help=help,
                    every=(cadences or {}).get(name),
                    last_started=last.started_at if last else None,
                    outcome=_outcome(last) if last else None,
                    last_message=last.message if last else "",
                    warnings=tuple((last.details_json or {}).get("warnings", ())) if last else (),
                    running_since=latest.started_at if latest and latest.finished_at is None else None,
                    next_run=next_runs.get(name),
                    failures_24h=int(failures),
                )
            )
    return out


def _outcome(run: JobRunRow) -> str:
    if run.ok:
        return OK
    return PARTIAL if (run.details_json or {}).get("outcome") == PARTIAL else FAILED


def _next_runs(engine: Engine) -> dict[str, datetime]:
    """Next run times APScheduler persisted (epoch seconds); empty before the first ``serve``."""
    if not inspect(engine).has_table(JOBSTORE_TABLE):
        return {}
    with engine.connect() as conn:
        rows = conn.execute(text(f"SELECT id, next_run_time FROM {JOBSTORE_TABLE}")).all()
    return {job_id: datetime.fromtimestamp(ts, UTC) for job_id, ts in rows if ts is not None}
