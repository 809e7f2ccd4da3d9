"""The jobs ``arena serve`` schedules, and the entry point APScheduler calls by name.

APScheduler persists jobs by reference, so the scheduled callable is ``run_named(name)``: it
builds the engine and the system clock (this is the composition root) and runs its job from
``job_specs`` through ``run_once``, which claims the period and records the outcome. Cadences
come from the process settings (``ARENA_SYNC_EVERY``...), read when the job runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
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


def job_specs(settings: Settings) -> dict[str, JobSpec]:
    """Every job ``arena serve`` runs, by name, at the cadences of ``settings``."""
    specs = (
        JobSpec("sync", settings.sync_every, sync_job, "Sync live venues' markets, prices and resolutions"),
        JobSpec("rounds", settings.rounds_every, _with_environ(live.rounds_job), "Run due decision rounds"),
        JobSpec(
            "marks",
            settings.marks_every,
            _with_environ(live.marks_job),
            "Mark portfolios to market (each cohort on its marks.every)",
        ),
        JobSpec(
            "settle", settings.settle_every, _with_environ(live.settlement_job), "Settle resolved markets"
        ),
        JobSpec(
            "complete",
            settings.complete_every,
            _with_environ(live.completion_job),
            "Complete finished cohorts",
        ),
    )
    return {spec.name: spec for spec in specs}


def run_named(name: str) -> None:
    """APScheduler's entry point: run job ``name`` once for the current period."""
    settings = Settings()
    engine: Engine = make_engine(settings.db_url)
    clock: Clock = SystemClock()
    try:
        run_once(job_specs(settings)[name], engine, clock)
    finally:
        engine.dispose()
