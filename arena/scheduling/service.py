"""``arena serve``: a lease-guarded APScheduler with its job store in the arena database.

A standby process polls the lease; the holder runs ``BackgroundScheduler`` whose jobs are
persisted, coalesced (a backlog of missed runs fires once) and allowed to run late within
``misfire_grace`` (``ARENA_MISFIRE_GRACE``). Every job first runs as soon as a process becomes
leader, so a restarted server syncs and marks at once rather than one cadence later; each job's
once-per-period claim (``runs``) skips it if another leader ran it in this period already.
Decision rounds do not depend on APScheduler: the rounds job runs every due round not yet done,
and records as missed those overdue by more than the cohort's ``schedule.catch_up_grace``.

The lease lives ``ARENA_LEADER_LEASE`` (60 s) and is renewed every ``poll``. Each tenure has its
own owner token (the first is ``owner``, later ones ``owner/2``, ``owner/3``…) and the leader
renews only while the row still names that token, so jobs started in a tenure (fenced by its
token, see ``jobs``) can never commit in a later one after another process led in between.

The database may go away (a restart, a network cut). Then the process retries with the workers'
capped exponential backoff (``arena.workers.backoff``), one line per attempt, and the leader
pauses its scheduler: no job starts against a database it cannot reach. When the database is
back, a leader whose row still names its token renews it and resumes (an outage longer than the
lease changes nothing if no standby took over); one whose lease a standby took steps down as on
any lost renewal, and its running jobs' writes are refused by their fence.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import STATE_PAUSED, STATE_RUNNING
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from arena.core.clock import Clock
from arena.core.settings import Settings
from arena.db import leases
from arena.db.leases import LeaseFence
from arena.scheduling import presence
from arena.scheduling.jobs import LEADERSHIP, job_specs
from arena.scheduling.timetable import JOBSTORE_TABLE
from arena.workers.backoff import Backoff, is_connection_error, retrying, unreachable_reason

log = logging.getLogger("arena.serve")
RELEASE_TRIES = 3  # at a clean stop: a release that cannot reach the database expires on its own


class JobStore(SQLAlchemyJobStore):  # type: ignore[misc]  # APScheduler 3 ships no types
    """APScheduler's SQLAlchemy job store, whose bookkeeping survives a dropped connection.

    APScheduler catches a failure to read the due jobs (and retries), but not one to write a
    job's next run time or to read the earliest one: either would end its scheduling thread for
    good while the process lives on. Here a lost connection leaves the next run time as it was
    (the job fires again and its period claim skips it) and wakes the scheduler again after the
    scheduler's retry interval."""

    def __init__(self, *, engine: Engine, tablename: str, clock: Clock, retry_after: float) -> None:
        super().__init__(engine=engine, tablename=tablename)
        self._clock, self._retry_after = clock, retry_after

    def update_job(self, job: object) -> None:
        try:
            super().update_job(job)
        except DBAPIError as exc:
            if not is_connection_error(exc):
                raise
            log.debug("job store: next run time not saved (%s)", unreachable_reason(exc))

    def get_next_run_time(self) -> datetime | None:
        try:
            return super().get_next_run_time()  # type: ignore[no-any-return]
        except DBAPIError as exc:
            if not is_connection_error(exc):
                raise
            return self._clock.now() + timedelta(seconds=self._retry_after)


def build_scheduler(engine: Engine, clock: Clock, settings: Settings) -> BackgroundScheduler:
    """A scheduler whose jobs (one per ``job_specs`` entry) live in the arena database, each due
    at once (``clock``'s now) and then every ``spec.every``."""
    retry = 10.0  # APScheduler's jobstore_retry_interval (its default)
    scheduler = BackgroundScheduler(
        jobstores={
            "default": JobStore(engine=engine, tablename=JOBSTORE_TABLE, clock=clock, retry_after=retry)
        },
        job_defaults={
            "coalesce": True,
            "max_instances": 1,
            "misfire_grace_time": int(settings.misfire_grace.total_seconds()),
        },
        jobstore_retry_interval=retry,
        timezone="UTC",
    )
    now = clock.now()
    for spec in job_specs(settings).values():
        scheduler.add_job(
            "arena.scheduling.jobs:run_named",
            "interval",
            args=[spec.name],
            id=spec.name,
            name=spec.help,
            seconds=int(spec.every.total_seconds()),
            next_run_time=now,
            replace_existing=True,
        )
    return scheduler


class Node:
    """One ``arena serve`` process: its presence row, its lease tenure and, while it leads, its
    scheduler. ``step`` does one lease check; the caller handles a lost connection (``outage``)."""

    def __init__(self, engine: Engine, clock: Clock, owner: str, settings: Settings) -> None:
        self.engine, self.clock, self.owner, self.settings = engine, clock, owner, settings
        self.token, self.tenure = owner, 1
        self.scheduler: BackgroundScheduler | None = None
        self.joined = False

    def step(self) -> None:
        """Record this process (once), then lead if the lease is free, or renew it if leading."""
        now = self.clock.now()
        if not self.joined:
            presence.join(self.engine, self.owner, socket.gethostname(), os.getpid(), now, self.settings)
            self.joined = True
        else:
            presence.beat(self.engine, self.owner, now)
        if self.scheduler is None:
            self._try_to_lead(now)
        elif leases.renew(self.engine, self.token, now, self.settings.leader_lease):
            if self.scheduler.state == STATE_PAUSED:  # by an outage that is over
                self.scheduler.resume()
        else:
            log.warning("serve %s: lost the lease; stopping the scheduler and standing by", self.token)
            self._step_down()

    def _try_to_lead(self, now: datetime) -> None:
        if not leases.try_acquire(self.engine, self.token, now, self.settings.leader_lease):
            log.debug("serve %s: standby; another process holds the lease", self.token)
            return
        log.info("serve %s: leader; starting the scheduler", self.token)
        LEADERSHIP.lead(LeaseFence(self.token))
        scheduler = build_scheduler(self.engine, self.clock, self.settings)
        try:
            scheduler.start()
        except BaseException:
            LEADERSHIP.lead(None)
            if scheduler.running:
                scheduler.shutdown(wait=False)
            raise
        self.scheduler = scheduler

    def outage(self) -> None:
        """The database cannot be reached: no job starts until it can (running ones carry on,
        their writes fenced)."""
        if self.scheduler is not None and self.scheduler.state == STATE_RUNNING:
            self.scheduler.pause()

    def _step_down(self) -> None:
        LEADERSHIP.lead(None)
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=True)
        self.scheduler = None
        self.tenure += 1
        self.token = f"{self.owner}/{self.tenure}"

    def close(self) -> None:
        """Stop the scheduler (its running jobs finish), give the lease up, mark this process
        stopped; a database still unreachable after a few tries is said once, not waited for."""
        LEADERSHIP.lead(None)
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=True)
        steps: tuple[tuple[str, Callable[[], None]], ...] = (
            ("release the lease", lambda: leases.release(self.engine, self.token)),
            ("record the stop", lambda: presence.leave(self.engine, self.owner, self.clock.now())),
        )
        for what, work in steps:
            try:
                retrying(work, say=log.debug, stop=threading.Event(), tries=RELEASE_TRIES)
            except DBAPIError as exc:
                if not is_connection_error(exc):
                    raise
                log.warning(
                    "serve %s: could not %s: database unreachable (%s); it expires on its own",
                    self.token,
                    what,
                    unreachable_reason(exc),
                )


def serve(
    engine: Engine,
    clock: Clock,
    owner: str,
    stop: threading.Event,
    *,
    poll: float = 5.0,
    settings: Settings | None = None,
) -> None:
    """Run until ``stop`` is set: lead when the lease is free, else stand by; release on exit.
    ``settings``: the cadences, misfire grace and leader lease (default: from the environment).
    A lost connection is retried with capped exponential backoff, never raised."""
    node = Node(engine, clock, owner, settings or Settings())
    backoff = Backoff()
    try:
        while not stop.is_set():
            try:
                node.step()
            except DBAPIError as exc:
                if not is_connection_error(exc):
                    raise
                node.outage()
                delay = backoff.failed().total_seconds()
                log.warning(
                    "serve %s: database unreachable (%s); retrying in %g s",
                    node.token,
                    unreachable_reason(exc),
                    delay,
                )
                stop.wait(delay)
                continue
            if backoff.reset():
                log.info("serve %s: database reachable again", node.token)
            stop.wait(poll)
    finally:
        node.close()
        log.info("serve %s: stopped", node.token)
