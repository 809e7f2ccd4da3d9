"""A worker's settings, apart from the worker so the CLI can show defaults without the engine."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

DEFAULT_LEASE_TTL = timedelta(seconds=30)
DEFAULT_POLL = timedelta(seconds=2)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """``lease_ttl``: how long a silent worker keeps a unit; ``poll``: idle wait between looks;
    ``until_idle``: exit once nothing is queued or running (studies, tests);
    ``replay_synchronous_commit``: see ``replay_cohort`` (``ARENA_REPLAY_SYNCHRONOUS_COMMIT``)."""

    lease_ttl: timedelta = DEFAULT_LEASE_TTL
    poll: timedelta = DEFAULT_POLL
    until_idle: bool = False
    replay_synchronous_commit: bool = True
