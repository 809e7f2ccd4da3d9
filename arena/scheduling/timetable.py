"""The jobs ``arena serve`` runs, by name, with their cadences and one-line help, without bodies.

Apart from ``arena.scheduling.jobs``, which binds each job to its body and so imports the whole
engine (bettors, market sources, the scheduler): ``arena status`` lists the jobs from here and
starts at the cost of its few queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from arena.core.settings import Settings

# The table where APScheduler keeps each job's next run time (``arena.scheduling.service``).
JOBSTORE_TABLE = "apscheduler_jobs"


@dataclass(frozen=True, slots=True)
class JobTiming:
    """A job's name, how often it runs and what it does (its line in ``arena status``)."""

    name: str
    every: timedelta
    help: str


# What each job does, by name, in the order ``arena status`` lists them.
JOB_HELP = {
    "sync": "Sync live venues' markets, prices and resolutions",
    "rounds": "Run due decision rounds",
    "marks": "Mark portfolios to market (each cohort on its marks.every)",
    "settle": "Settle resolved markets",
    "complete": "Complete finished cohorts",
}


def job_timings(settings: Settings) -> dict[str, JobTiming]:
    """Every job ``arena serve`` runs, by name, at the cadences of ``settings``."""
    every = {
        "sync": settings.sync_every,
        "rounds": settings.rounds_every,
        "marks": settings.marks_every,
        "settle": settings.settle_every,
        "complete": settings.complete_every,
    }
    return {name: JobTiming(name, every[name], help) for name, help in JOB_HELP.items()}
