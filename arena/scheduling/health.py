"""The health of a live deployment as data: what ``arena status`` prints, as text or JSON, and
the problems that make it exit non-zero.

A problem has a ``kind`` a probe can match, a ``subject`` and a one-line ``reason``:

- ``scheduler_down``: a live cohort is active and no ``arena serve`` holds the scheduler lease;
- ``job_failed`` / ``job_partial``: a job's last finished run failed, or did its work only in
  part (a sync whose venue listing answered 503 halfway, say);
- ``job_late``: the leader is alive but a job's next run is overdue by more than its cadence
  and a minute (its scheduler is not processing jobs);
- ``worker_gone``: an ``arena worker`` has not beaten for its lease (killed, stuck or cut off)
  and no other worker on its host is alive; reported for a day, then only listed;
- ``cohort_stuck``: a due round is not run in time, or positions wait long for a resolution
  (``arena.scheduling.stuck``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func
from sqlmodel import col, select

from arena.db import leases
from arena.db.engine import session_scope
from arena.db.leases import LeaseHolder
from arena.db.models import CohortRow, WorkerRow, WorkUnitRow
from arena.scheduling import presence
from arena.scheduling.presence import ServeProcess
from arena.scheduling.runs import FAILED, PARTIAL
from arena.scheduling.status import JobStatus, job_statuses
from arena.scheduling.stuck import POSITIONS_HELD, stuck_cohorts
from arena.workers import roster

GONE_REPORTED_FOR = timedelta(days=1)
LATE_SLACK = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    subject: str
    reason: str


@dataclass(frozen=True, slots=True)
class WorkerState:
    name: str
    host: str
    pid: int
    state: str  # working | idle | stopped | gone (``roster.state_of``)
    heartbeat_at: datetime
    unit_id: int | None
    units_done: int


@dataclass(frozen=True)
class Health:
    checked_at: datetime
    leader: LeaseHolder | None  # None: nobody holds a live lease
    standbys: list[ServeProcess]
    recorded: dict[str, Any] | None  # the settings the serving process recorded
    jobs: list[JobStatus]
    workers: list[WorkerState]
    units: dict[str, dict[str, int]]  # kind -> state -> count
    problems: list[Problem]

    @property
    def healthy(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        """Plain JSON values: times as ISO 8601 UTC, durations in seconds."""
        now = self.checked_at
        return {
            "healthy": self.healthy,
            "checked_at": _iso(now),
            "problems": [asdict(p) for p in self.problems],
            "scheduler": {
                "leader": None if self.leader is None else self.leader.owner,
                "lease_until": None if self.leader is None else _iso(self.leader.expires_at),
                "standbys": [
                    {"owner": s.owner, "host": s.host, "pid": s.pid, "heartbeat_at": _iso(s.heartbeat_at)}
                    for s in self.standbys
                ],
                "settings": self.recorded,
            },
            "jobs": [_job_json(j, now) for j in self.jobs],
            "workers": [
                {
                    **asdict(w),
                    "heartbeat_at": _iso(w.heartbeat_at),
                    "silent_seconds": _secs(now - w.heartbeat_at),
                }
                for w in self.workers
            ],
            "units": self.units,
        }


def check(engine: Engine, now: datetime) -> Health:
    """Everything ``arena status`` shows, read in a few queries."""
    held = leases.holder(engine)
    leader = held if held is not None and held.expires_at >= now else None
    serving = presence.running(engine)
    lead = next((s for s in serving if leader is not None and s.leads_as(leader.owner)), None)
    standbys = [s for s in serving if s is not lead and s.alive(now)]
    recorded = lead.settings if lead is not None else presence.latest_settings(engine)
    cadences = {k: timedelta(seconds=v) for k, v in ((recorded or {}).get("every") or {}).items()}
    jobs = job_statuses(engine, now, cadences)
    rounds = cadences.get("rounds")
    with session_scope(engine, write=False) as session:
        workers = [_worker(row, now) for row in roster.workers(session)]
        units = _unit_counts(session)
        active = session.exec(
            select(func.count()).where(CohortRow.mode == "live", col(CohortRow.status).in_(POSITIONS_HELD))
        ).one()
    problems = [
        *_scheduler_problems(held, leader, int(active)),
        *_job_problems(jobs, leader, now),
        *_worker_problems(workers, now),
        *(Problem("cohort_stuck", s.cohort_id, s.reason) for s in stuck_cohorts(engine, now, rounds)),
    ]
    return Health(now, leader, standbys, recorded, jobs, workers, units, problems)


def _scheduler_problems(held: LeaseHolder | None, leader: LeaseHolder | None, active: int) -> list[Problem]:
    if leader is not None or not active:
        return []
    last = "never held" if held is None else f"last held by {held.owner} until {_iso(held.expires_at)}"
    reason = f"{active} live cohort(s) active and no `arena serve` holds the scheduler lease ({last})"
    return [Problem("scheduler_down", "scheduler", reason)]


def _job_problems(jobs: list[JobStatus], leader: LeaseHolder | None, now: datetime) -> list[Problem]:
    found = []
    for job in jobs:
        if job.outcome == FAILED:
            found.append(Problem("job_failed", job.name, job.last_message))
        elif job.outcome == PARTIAL:
            found.append(Problem("job_partial", job.name, "; ".join([job.last_message, *job.warnings])))
        allowed = (job.every or timedelta(minutes=1)) + LATE_SLACK
        if leader is not None and job.lag(now) > allowed:
            found.append(
                Problem(
                    "job_late", job.name, f"next run overdue by {_secs(job.lag(now)):.0f} s (leader alive)"
                )
            )
    return found


def _worker_problems(workers: list[WorkerState], now: datetime) -> list[Problem]:
    alive_hosts = {w.host for w in workers if w.state in (roster.WORKING, roster.IDLE)}
    return [
        Problem(
            "worker_gone",
            w.name,
            f"no heartbeat for {_secs(now - w.heartbeat_at):.0f} s, past its lease: killed, stuck or cut "
            "off (its units go to other workers)",
        )
        for w in workers
        if w.state == roster.GONE and w.host not in alive_hosts and now - w.heartbeat_at <= GONE_REPORTED_FOR
    ]


def _worker(row: WorkerRow, now: datetime) -> WorkerState:
    state = roster.state_of(row, now)
    unit = row.unit_id if state in (roster.WORKING, roster.IDLE) else None
    return WorkerState(row.name, row.host, row.pid, state, row.heartbeat_at, unit, row.units_done)


def _unit_counts(session: Any) -> dict[str, dict[str, int]]:
    rows = session.exec(
        select(WorkUnitRow.kind, WorkUnitRow.state, func.count()).group_by(
            col(WorkUnitRow.kind), col(WorkUnitRow.state)
        )
    ).all()
    counts: dict[str, dict[str, int]] = {}
    for kind, state, n in rows:
        counts.setdefault(kind, {})[state] = int(n)
    return counts


def _job_json(job: JobStatus, now: datetime) -> dict[str, Any]:
    return {
        "name": job.name,
        "every_seconds": None if job.every is None else _secs(job.every),
        "last_run": _iso(job.last_started),
        "outcome": job.outcome,
        "message": job.last_message,
        "warnings": list(job.warnings),
        "running_since": _iso(job.running_since),
        "next_run": _iso(job.next_run),
        "lag_seconds": _secs(job.lag(now)),
        "failures_24h": job.failures_24h,
    }


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def _secs(span: timedelta) -> float:
    return round(span.total_seconds(), 3)
