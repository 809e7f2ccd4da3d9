"""The jobs ``arena serve`` schedules, and the entry point APScheduler calls by name.

APScheduler persists jobs by reference, so the scheduled callable is ``run_named(name)``: it
builds the engine and the system clock (this is the composition root) and runs its job from
``job_specs`` through ``run_once``, which claims the period and records the outcome. Cadences
come from the process settings (``ARENA_SYNC_EVERY``...), read when the job runs.

Every write of a job is fenced by the scheduler lease (``leases.LeaseFence``): a leader paused
past its lease that wakes mid-job commits nothing once another process has taken over. The fence
is this process's, set by ``serve`` in ``LEADERSHIP``, never an argument in the job store: that
table is shared, and would hand a woken old leader the new leader's owner token.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from functools import partial

from sqlalchemy import URL, Engine, make_url
from sqlalchemy.exc import DBAPIError

from arena.core.clock import Clock, SystemClock
from arena.core.settings import Settings
from arena.db.engine import make_engine
from arena.db.leases import FenceLost, LeaseFence
from arena.engine.live import jobs as live
from arena.scheduling import handoff
from arena.scheduling.runs import JobBody, JobFailed, JobSpec, run_once
from arena.scheduling.timetable import job_timings
from arena.workers.backoff import is_connection_error, unreachable_reason
from arena.workers.queue import fenced_session_url

log = logging.getLogger("arena.serve")


class Leadership:
    """Whose lease this process's jobs write under: the fence of the current tenure, or None."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fence: LeaseFence | None = None

    @property
    def fence(self) -> LeaseFence | None:
        with self._lock:
            return self._fence

    def lead(self, fence: LeaseFence | None) -> None:
        with self._lock:
            self._fence = fence

    def lose(self, fence: LeaseFence) -> None:
        """Stop starting jobs under ``fence`` (``serve`` steps down at its next lease check)."""
        with self._lock:
            if self._fence == fence:
                self._fence = None


LEADERSHIP = Leadership()


def lease_bounded(url: str | URL, settings: Settings) -> str | URL:
    """``url`` for ``arena serve``'s connections. On PostgreSQL the server ends a session left
    idle inside a transaction for one leader lease: a leader paused mid-transaction (even mid-way
    through a lease renewal) would otherwise hold its row locks, and the standby could neither
    take the lease nor write what the paused leader had locked. SQLite is used as is."""
    if make_url(url).get_backend_name() != "postgresql":
        return url
    return fenced_session_url(url, settings.leader_lease)


def _with_environ(job: Callable[..., str]) -> JobBody:
    """Jobs read API keys from the process environment at run time; they are never stored."""
    return partial(job, environ=os.environ)


def _leading() -> bool:
    """Whether this process still leads: a job waiting for workers' units stops waiting once not."""
    return LEADERSHIP.fence is not None


def job_specs(settings: Settings) -> dict[str, JobSpec]:
    """Every job ``arena serve`` runs (``job_timings``), by name, bound to its body. Sync, marks
    and settlement go to ``arena worker`` processes when one is idle (``handoff``), each waiting
    for its units up to its own cadence."""
    timings = job_timings(settings)
    bodies: dict[str, JobBody] = {
        "sync": partial(handoff.sync, leading=_leading, within=settings.sync_every),
        "rounds": _with_environ(handoff.rounds),
        "marks": _with_environ(partial(handoff.marks, leading=_leading, within=settings.marks_every)),
        "settle": _with_environ(partial(handoff.settle, leading=_leading, within=settings.settle_every)),
        "complete": _with_environ(live.completion_job),
    }
    return {name: JobSpec(name, t.every, bodies[name], t.help) for name, t in timings.items()}


def run_named(name: str) -> None:
    """APScheduler's entry point: run job ``name`` once for the current period, every write
    fenced by the lease tenure this process held when the job started. Never raises for a
    failed run (recorded and logged once) nor for a lost connection (one line): APScheduler
    would log a traceback; only a bug reaches it."""
    fence = LEADERSHIP.fence
    if fence is None:
        log.warning("job %s: this process no longer leads the scheduler; not run", name)
        return
    settings = Settings()
    engine: Engine = make_engine(lease_bounded(settings.db_url, settings))
    clock: Clock = SystemClock()
    try:
        run_once(job_specs(settings)[name], fence.guard(engine), clock)
    except FenceLost as lost:
        LEADERSHIP.lose(fence)
        log.warning(
            "lost the scheduler lease to %s: this process's job %s commits nothing",
            lost.holder or "nobody",
            name,
        )
    except JobFailed:
        pass  # recorded in job_run and logged by run_once
    except DBAPIError as exc:
        if not is_connection_error(exc):
            raise
        # The period's claim may stay unfinished; the next period runs the job again (rounds run
        # every due round not done, so a lost period loses no round).
        reason = unreachable_reason(exc)
        log.warning("job %s: database unreachable (%s); abandoned until its next run", name, reason)
    finally:
        engine.dispose()
