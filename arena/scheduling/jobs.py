"""The jobs ``arena serve`` schedules, and the entry point APScheduler calls by name.

APScheduler persists jobs by reference, so the scheduled callable is ``run_named(name)``: it
builds the engine and the system clock (this is the composition root) and runs ``JOBS[name]``
through ``run_once``, which claims the period and records the outcome.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from functools import partial

from sqlalchemy import Engine

from arena.clock import Clock, SystemClock
from arena.db.engine import make_engine
from arena.engine import live
from arena.scheduling.runs import JobBody, JobSpec, run_once
from arena.scheduling.sync_job import sync_job
from arena.settings import Settings


def _with_environ(job: Callable[..., str]) -> JobBody:
    """Jobs read API keys from the process environment at run time; they are never stored."""
    return partial(job, environ=os.environ)


JOBS: dict[str, JobSpec] = {
    spec.name: spec
    for spec in (
        JobSpec("sync", timedelta(minutes=15), sync_job, "Sync live venues' markets, prices and resolutions"),
        JobSpec("rounds", timedelta(minutes=1), _with_environ(live.rounds_job), "Run due decision rounds"),
        JobSpec("marks", timedelta(hours=1), _with_environ(live.marks_job), "Mark portfolios to market"),
        JobSpec(
            "settle", timedelta(minutes=10), _with_environ(live.settlement_job), "Settle resolved markets"
        ),
        JobSpec(
            "complete", timedelta(hours=1), _with_environ(live.completion_job), "Complete finished cohorts"
        ),
    )
}


def run_named(name: str) -> None:
    """APScheduler's entry point: run job ``name`` once for the current period."""
    engine: Engine = make_engine(Settings().db_url)
    clock: Clock = SystemClock()
    try:
        run_once(JOBS[name], engine, clock)
    finally:
        engine.dispose()
