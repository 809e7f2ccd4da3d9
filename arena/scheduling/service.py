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
"""

from __future__ import annotations

import logging
import threading

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import Engine

from arena.core.clock import Clock
from arena.core.settings import Settings
from arena.db import leases
from arena.db.leases import LeaseFence
from arena.scheduling.jobs import LEADERSHIP, job_specs
from arena.scheduling.timetable import JOBSTORE_TABLE

log = logging.getLogger("arena.serve")


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
    ``settings``: the cadences, misfire grace and leader lease (default: from the environment)."""
    settings = settings or Settings()
    ttl = settings.leader_lease
    token, tenure = owner, 1
    scheduler: BackgroundScheduler | None = None
    try:
        while not stop.is_set():
            if scheduler is None:
                if leases.try_acquire(engine, token, clock.now(), ttl):
                    log.info("serve %s: leader; starting the scheduler", token)
                    LEADERSHIP.lead(LeaseFence(token))
                    scheduler = build_scheduler(engine, clock, settings)
                    scheduler.start()
                else:
                    log.debug("serve %s: standby; another process holds the lease", token)
            elif not leases.renew(engine, token, clock.now(), ttl):
                log.warning("serve %s: lost the lease; stopping the scheduler and standing by", token)
                LEADERSHIP.lead(None)
                scheduler.shutdown(wait=True)
                scheduler = None
                tenure += 1
                token = f"{owner}/{tenure}"
            stop.wait(poll)
    finally:
        LEADERSHIP.lead(None)
        if scheduler is not None:
            scheduler.shutdown(wait=True)
        leases.release(engine, token)
        log.info("serve %s: stopped", token)
