"""``arena serve``: a lease-guarded APScheduler with its job store in the arena database.

A standby process polls the lease; the holder runs ``BackgroundScheduler`` whose jobs are
persisted, coalesced (a backlog of missed runs fires once) and allowed to run late within
``misfire_grace`` (``ARENA_MISFIRE_GRACE``). Every job first runs as soon as a process becomes
leader, so a restarted server syncs and marks at once rather than one cadence later; each job's
once-per-period claim (``runs``) skips it if another leader ran it in this period already.
Decision rounds do not depend on APScheduler: the rounds job runs every due round not yet done,
and records as missed those overdue by more than the cohort's ``schedule.catch_up_grace``.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import Engine

from arena.clock import Clock
from arena.db import leases
from arena.scheduling.jobs import job_specs
from arena.settings import Settings

log = logging.getLogger("arena.serve")

JOBSTORE_TABLE = "apscheduler_jobs"
LEASE_TTL = timedelta(seconds=60)


def build_scheduler(engine: Engine, clock: Clock, settings: Settings) -> BackgroundScheduler:
    """A scheduler whose jobs (one per ``job_specs`` entry) live in the arena database, each due
    at once (``clock``'s now) and then every ``spec.every``."""
    scheduler = BackgroundScheduler(
        jobstores={"default": SQLAlchemyJobStore(engine=engine, tablename=JOBSTORE_TABLE)},
        job_defaults={
            "coalesce": True,
            "max_instances": 1,
            "misfire_grace_time": int(settings.misfire_grace.total_seconds()),
        },
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
    ``settings``: the cadences and misfire grace (default: from the environment)."""
    settings = settings or Settings()
    scheduler: BackgroundScheduler | None = None
    try:
        while not stop.is_set():
            leading = leases.try_acquire(engine, owner, clock.now(), LEASE_TTL)
            if leading and scheduler is None:
                log.info("serve %s: leader; starting the scheduler", owner)
                scheduler = build_scheduler(engine, clock, settings)
                scheduler.start()
            elif not leading and scheduler is not None:
                log.warning("serve %s: lost the lease; stopping the scheduler", owner)
                scheduler.shutdown(wait=True)
                scheduler = None
            elif not leading:
                log.debug("serve %s: standby; another process holds the lease", owner)
            stop.wait(poll)
    finally:
        if scheduler is not None:
            scheduler.shutdown(wait=True)
        leases.release(engine, owner)
        log.info("serve %s: stopped", owner)
