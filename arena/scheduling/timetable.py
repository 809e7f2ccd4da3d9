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


def job_timings(settings: Settings) -> dict[str, JobTiming]:
    """Every job ``arena serve`` runs, by name, at the cadences of ``settings``."""
    timings = (
        JobTiming("sync", settings.sync_every, "Sync live venues' markets, prices and resolutions"),
        JobTiming("rounds", settings.rounds_every, "Run due decision rounds"),
        JobTiming(
            "marks", settings.marks_every, "Mark portfolios to market (each cohort on its marks.every)"
        ),
        JobTiming("settle", settings.settle_every, "Settle resolved markets"),
        JobTiming("complete", settings.complete_every, "Complete finished cohorts"),
    )
    return {timing.name: timing for timing in timings}
