"""A worker's settings, apart from the worker so the CLI can show defaults without the engine."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

DEFAULT_LEASE_TTL = timedelta(seconds=30)
DEFAULT_POLL = timedelta(seconds=2)
DEFAULT_SLOTS = 256  # decision units at once: a round's default concurrency (MAX_CONCURRENCY)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """``lease_ttl``: how long a silent worker keeps a unit; ``poll``: idle wait between looks;
    ``until_idle``: exit once nothing is queued or running (studies, tests); ``slots``: how many
    decision units run at once (each mostly waits on its agent's provider);
    ``replay_synchronous_commit``: see ``replay_cohort`` (``ARENA_REPLAY_SYNCHRONOUS_COMMIT``)."""

    lease_ttl: timedelta = DEFAULT_LEASE_TTL
    poll: timedelta = DEFAULT_POLL
    until_idle: bool = False
    slots: int = DEFAULT_SLOTS
    replay_synchronous_commit: bool = True
