"""``arena worker``: take units from the queue and run them, until stopped (or idle, if asked).

Any number of workers on any number of machines point at one PostgreSQL; the queue's leases keep
them off each other's units. A worker survives its database: started before PostgreSQL is up, or
cut off by a restart mid-run, it retries with capped exponential backoff and carries on; a unit it
was running when the connection died is resumed by whichever worker takes it after its lease
expires (replays resume where they stopped; decision claims keep every decision exactly-once).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable, Mapping
from typing import TypeVar

from sqlalchemy import Engine, func
from sqlalchemy.exc import DBAPIError
from sqlmodel import col, select

from agents.registry import AgentConfigError
from arena.cohorts.config import ConfigError
from arena.core.clock import Clock
from arena.db.engine import session_scope
from arena.db.models import WorkUnitRow
from arena.engine.replay.lease import CohortBusy
from arena.engine.replay.runner import CohortNotRunnable
from arena.engine.runtime.cohort import CohortNotFound
from arena.workers import queue, roster
from arena.workers.backoff import is_connection_error, retrying
from arena.workers.fence import CommitRefused, LeaseLost
from arena.workers.host import Job, UnitContext
from arena.workers.keeper import LeaseKeeper
from arena.workers.queue import Lease, Outcome
from arena.workers.settings import WorkerSettings
from arena.workers.units import RUNNERS

log = logging.getLogger(__name__)
T = TypeVar("T")

# A unit that can never run as configured: failed at once, not retried.
PERMANENT = (ConfigError, CohortNotFound, CohortNotRunnable, AgentConfigError)


class Worker:
    def __init__(
        self,
        engine: Engine,
        *,
        clock: Clock,
        settings: WorkerSettings,
        environ: Mapping[str, str],
        say: Callable[[str], None],
    ) -> None:
        self.engine, self.clock, self.settings = engine, clock, settings
        self.environ, self.say = environ, say
        # host:pid for a reader, plus a random part: a restarted container reuses both.
        self.name = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._stop = threading.Event()

    def run(self) -> None:
        """Work until ``stop()`` (or, with ``until_idle``, until no unit is queued or running)."""
        host, pid = socket.gethostname(), os.getpid()
        ttl = self.settings.lease_ttl
        self.with_database(lambda: roster.join(self.engine, self.name, host, pid, self.clock.now(), ttl))
        self.say(f"worker {self.name} ready (lease {self.settings.lease_ttl.total_seconds():g} s)")
        try:
            while not self._stop.is_set():
                lease = self.with_database(self._take)
                if lease is not None:
                    RUNNERS[lease.kind](self, lease)
                elif self.settings.until_idle and not self.with_database(self._pending):
                    self.say("queue empty: stopping")
                    return
                else:
                    self.with_database(lambda: roster.beat(self.engine, self.name, self.clock.now(), None))
                    self._stop.wait(self._idle_wait())
        finally:
            self.with_database(lambda: roster.leave(self.engine, self.name, self.clock.now()), tries=3)

    def stop(self) -> None:
        self._stop.set()

    def _idle_wait(self) -> float:
        """Seconds between looks at an empty queue: ``poll``, but at most half the lease, so an
        idle worker beats well within it (``arena status`` calls one silent for its lease gone)."""
        return min(self.settings.poll, self.settings.lease_ttl / 2).total_seconds()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _take(self) -> Lease | None:
        return queue.take(self.engine, self.name, self.clock.now(), self.settings.lease_ttl)

    def _pending(self) -> int:
        with session_scope(self.engine, write=False) as session:
            query = select(func.count()).where(col(WorkUnitRow.state).in_((queue.QUEUED, queue.RUNNING)))
            return int(session.exec(query).one())

    def run_one(self, lease: Lease, job: Job) -> None:
        """Run a unit that is one job (``units.single``) and finish it with the job's outcome,
        its lease renewed meanwhile; a lost lease or a database fault leaves it to the next
        taker."""
        self.say(f"took unit {lease.unit_id}: {lease.describe()} (attempt {lease.attempt})")
        started = self.clock.now()
        self.with_database(lambda: roster.beat(self.engine, self.name, started, lease.unit_id))  # busy
        ctx = UnitContext(
            self.engine,
            lease,
            self.clock,
            self.environ,
            self.settings.lease_ttl,
            synchronous_commit=self.settings.replay_synchronous_commit,
        )
        try:
            with LeaseKeeper(
                self.engine,
                lease,
                worker=self.name,
                clock=self.clock,
                ttl=self.settings.lease_ttl,
                on_lost=ctx.lease_lost,
            ):
                outcome = job(ctx)
        except Exception as exc:
            self.unit_raised(lease, exc)
            return
        self.finish(lease, outcome, (self.clock.now() - started).total_seconds())

    def unit_raised(self, lease: Lease, exc: Exception, *, wait_for_database: bool = True) -> None:
        """End a unit whose runner raised ``exc``, for every kind: a lost lease or a refused commit
        leaves it to its new holder; a busy cohort gives it back; a config that can never run
        fails it; a lost connection leaves it to the next taker (``wait_for_database``: and waits,
        with backoff, for the database to return); anything else is a bug, recorded on the unit."""
        if isinstance(exc, CommitRefused):
            self.say(
                f"refused: unit {lease.unit_id} was taken over by another worker while this one ran "
                "it; its commit was rolled back (fencing)"
            )
        elif isinstance(exc, LeaseLost):
            self.say(f"lost the lease of unit {lease.unit_id} to another worker: stopped it unfinished")
        elif isinstance(exc, CohortBusy):
            self.give_back(lease, str(exc))
        elif isinstance(exc, PERMANENT):
            self.finish(lease, Outcome(f"{type(exc).__name__}: {exc}"))
        elif isinstance(exc, DBAPIError) and is_connection_error(exc):
            self.say(
                f"database connection lost while running unit {lease.unit_id}; it resumes once its "
                "lease expires"
            )
            if wait_for_database:
                self.with_database(self._pending)
        else:
            self.failed_by_bug(lease, exc)

    def give_back(self, lease: Lease, reason: str) -> None:
        """Back to the queue, available after one lease time: another process holds the cohort."""
        again = self.clock.now() + self.settings.lease_ttl
        given = self.with_database(lambda: queue.retry_later(self.engine, lease, again, reason))
        if self._fenced(lease, given):
            self.say(f"unit {lease.unit_id} back in the queue: {reason}")

    def failed_by_bug(self, lease: Lease, exc: Exception) -> None:
        """A bug in a unit: recorded on the unit and logged with its traceback; the worker goes on."""
        log.error("unit %s raised", lease.unit_id, exc_info=exc)
        self.finish(lease, Outcome(f"{type(exc).__name__}: {exc}"))

    def finish(
        self, lease: Lease, outcome: Outcome, seconds: float | None = None, *, quiet: bool = False
    ) -> bool:
        """Finish under the lease, waiting out a database outage (a retry after a commit whose
        reply was lost is harmless: it names the same token and writes the same values).
        ``quiet``: a decision unit, done: no line and no roster write of its own (one line per
        unit would flood the log; the batch counts its units in the roster when it ends).
        False when the unit was no longer ours (refused, and said so)."""
        error, warning = outcome.error, outcome.warning
        done = self.with_database(
            lambda: queue.finish(self.engine, lease, self.clock.now(), error=error, warning=warning)
        )
        if not self._fenced(lease, done):
            return False
        if not (quiet and error is None):
            self.with_database(
                lambda: roster.beat(self.engine, self.name, self.clock.now(), None, finished=1)
            )
            took = "" if seconds is None else f" in {seconds:.1f} s"
            said = f": {outcome.summary}" if outcome.summary and not error else ""
            warned = f" (partly failed: {warning})" if warning and not error else ""
            self.say(f"unit {lease.unit_id} {'failed: ' + error if error else 'done'}{took}{said}{warned}")
        return True

    def _fenced(self, lease: Lease, applied: bool) -> bool:
        if not applied:
            self.say(
                f"refused: unit {lease.unit_id} was taken over by another worker while this one "
                "ran it; its result is discarded (fencing)"
            )
        return applied

    def with_database(self, work: Callable[[], T], *, tries: int | None = None) -> T:
        return retrying(work, say=self.say, stop=self._stop, tries=tries)
