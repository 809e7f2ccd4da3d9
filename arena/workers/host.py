"""What a unit's runner needs from the worker that took it, apart from the worker itself.

The runners (``units``, ``decision_units``) are called by ``worker.Worker`` and call back into it;
they see it as a ``UnitHost``, so neither imports the worker that imports them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Protocol, TypeVar

from sqlalchemy import Engine

from arena.core.clock import Clock
from arena.workers.fence import UnitFence
from arena.workers.queue import Lease, Outcome
from arena.workers.settings import WorkerSettings

T = TypeVar("T")


@dataclass
class UnitContext:
    """What a runner may use: the database (plain and fenced by the unit's lease), the clock, the
    environment (API keys), the lease and its time to live."""

    engine: Engine
    lease: Lease
    clock: Clock
    environ: Mapping[str, str]
    lease_ttl: timedelta
    synchronous_commit: bool = True  # a replay unit's own writes (``ARENA_REPLAY_SYNCHRONOUS_COMMIT``)
    lost: threading.Event = field(default_factory=threading.Event, init=False)
    _on_lost: Callable[[], object] | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    @property
    def fenced(self) -> Engine:
        """The engine whose every write commits only while this worker holds the unit's lease."""
        return UnitFence(self.lease).guard(self.engine)

    def when_lost(self, stop: Callable[[], object] | None) -> None:
        """What to call (from the lease keeper's thread) if the lease is lost; None: nothing."""
        with self._lock:
            self._on_lost = stop

    def lease_lost(self) -> None:
        self.lost.set()
        with self._lock:
            if self._on_lost is not None:
                self._on_lost()


Job = Callable[[UnitContext], Outcome]
"""A unit that is one job: runs with the unit's context, returns its outcome."""


class UnitHost(Protocol):
    """The worker as its runners use it: its database, clock, settings and how it ends units."""

    engine: Engine
    clock: Clock
    settings: WorkerSettings
    environ: Mapping[str, str]
    name: str
    say: Callable[[str], None]

    @property
    def stopping(self) -> bool: ...

    def with_database(self, work: Callable[[], T], *, tries: int | None = None) -> T: ...

    def run_one(self, lease: Lease, job: Job) -> None: ...

    def finish(
        self, lease: Lease, outcome: Outcome, seconds: float | None = None, *, quiet: bool = False
    ) -> bool: ...

    def give_back(self, lease: Lease, reason: str) -> None: ...

    def unit_raised(self, lease: Lease, exc: Exception, *, wait_for_database: bool = True) -> None: ...
