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
from arena.clock import Clock
from arena.cohorts.config import ConfigError
from arena.db.engine import session_scope
from arena.db.models import WorkUnitRow
from arena.engine.replay import CohortNotRunnable
from arena.engine.replay_lease import CohortBusy
from arena.engine.runtime import CohortNotFound
from arena.workers import queue, roster
from arena.workers.backoff import is_connection_error, retrying
from arena.workers.keeper import LeaseKeeper
from arena.workers.queue import Lease
from arena.workers.settings import WorkerSettings
from arena.workers.units import RUNNERS, CommitRefused, LeaseLost, Outcome, UnitContext

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
        self._engine, self._clock, self._settings = engine, clock, settings
        self._environ, self._say = environ, say
        # host:pid for a reader, plus a random part: a restarted container reuses both.
        self.name = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._stop = threading.Event()

    def run(self) -> None:
        """Work until ``stop()`` (or, with ``until_idle``, until no unit is queued or running)."""
        host, pid = socket.gethostname(), os.getpid()
        self._with_database(lambda: roster.join(self._engine, self.name, host, pid, self._clock.now()))
        self._say(f"worker {self.name} ready (lease {self._settings.lease_ttl.total_seconds():g} s)")
        try:
            while not self._stop.is_set():
                lease = self._with_database(self._take)
                if lease is not None:
                    self._run(lease)
                elif self._settings.until_idle and not self._with_database(self._pending):
                    self._say("queue empty: stopping")
                    return
                else:
                    self._with_database(lambda: roster.beat(self._engine, self.name, self._clock.now(), None))
                    self._stop.wait(self._settings.poll.total_seconds())
        finally:
            self._with_database(lambda: roster.leave(self._engine, self.name, self._clock.now()), tries=3)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _take(self) -> Lease | None:
        return queue.take(self._engine, self.name, self._clock.now(), self._settings.lease_ttl)

    def _pending(self) -> int:
        with session_scope(self._engine, write=False) as session:
            query = select(func.count()).where(col(WorkUnitRow.state).in_((queue.QUEUED, queue.RUNNING)))
            return int(session.exec(query).one())

    def _run(self, lease: Lease) -> None:
        """Run one unit and finish it under its lease; a lost lease or a database fault leaves it
        to the next taker."""
        self._say(f"took unit {lease.unit_id}: {lease.describe()} (attempt {lease.attempt})")
        started = self._clock.now()
        self._with_database(lambda: roster.beat(self._engine, self.name, started, lease.unit_id))  # busy
        try:
            outcome = self._execute(lease)
        except CommitRefused:
            self._say(
                f"refused: unit {lease.unit_id} was taken over by another worker while this one ran "
                "it; its commit was rolled back (fencing)"
            )
            return
        except LeaseLost:
            self._say(f"lost the lease of unit {lease.unit_id} to another worker: stopped it unfinished")
            return
        except CohortBusy as exc:
            self._give_back(lease, str(exc))
            return
        except PERMANENT as exc:
            self._finish(lease, Outcome(f"{type(exc).__name__}: {exc}"))
            return
        except DBAPIError as exc:
            if not is_connection_error(exc):
                self._failed_by_bug(lease, exc)
                return
            self._say(
                f"database connection lost while running unit {lease.unit_id}; it resumes once its "
                "lease expires"
            )
            self._with_database(self._pending)  # waits, with backoff, for the database to return
            return
        except Exception as exc:
            self._failed_by_bug(lease, exc)
            return
        self._finish(lease, outcome, (self._clock.now() - started).total_seconds())

    def _execute(self, lease: Lease) -> Outcome:
        """The unit's runner (``units.RUNNERS`` by kind), its lease renewed meanwhile."""
        ctx = UnitContext(
            self._engine,
            lease,
            self._clock,
            self._environ,
            self._settings.lease_ttl,
            synchronous_commit=self._settings.replay_synchronous_commit,
        )
        with LeaseKeeper(
            self._engine,
            lease,
            worker=self.name,
            clock=self._clock,
            ttl=self._settings.lease_ttl,
            on_lost=ctx.lease_lost,
        ):
            return RUNNERS[lease.kind](ctx)

    def _give_back(self, lease: Lease, reason: str) -> None:
        """Back to the queue, available after one lease time: another process holds the cohort."""
        again = self._clock.now() + self._settings.lease_ttl
        given = self._with_database(lambda: queue.retry_later(self._engine, lease, again, reason))
        if self._fenced(lease, given):
            self._say(f"unit {lease.unit_id} back in the queue: {reason}")

    def _failed_by_bug(self, lease: Lease, exc: Exception) -> None:
        """A bug in a unit: recorded on the unit and logged with its traceback; the worker goes on."""
        log.error("unit %s raised", lease.unit_id, exc_info=exc)
        self._finish(lease, Outcome(f"{type(exc).__name__}: {exc}"))

    def _finish(self, lease: Lease, outcome: Outcome, seconds: float | None = None) -> None:
        """Finish under the lease, waiting out a database outage (a retry after a commit whose
        reply was lost is harmless: it names the same token and writes the same values)."""
        error = outcome.error
        done = self._with_database(lambda: queue.finish(self._engine, lease, self._clock.now(), error=error))
        if self._fenced(lease, done):
            self._with_database(
                lambda: roster.beat(self._engine, self.name, self._clock.now(), None, finished=True)
            )
            took = "" if seconds is None else f" in {seconds:.1f} s"
            said = f": {outcome.summary}" if outcome.summary and not error else ""
            self._say(f"unit {lease.unit_id} {'failed: ' + error if error else 'done'}{took}{said}")

    def _fenced(self, lease: Lease, applied: bool) -> bool:
        if not applied:
            self._say(
                f"refused: unit {lease.unit_id} was taken over by another worker while this one "
                "ran it; its result is discarded (fencing)"
            )
        return applied

    def _with_database(self, work: Callable[[], T], *, tries: int | None = None) -> T:
        return retrying(work, say=self._say, stop=self._stop, tries=tries)
