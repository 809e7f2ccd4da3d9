"""Keep a unit's lease while the unit runs, and stop the unit the moment the lease is lost.

A background thread renews the lease every quarter of its time to live. When a renewal finds the
token gone (this process was paused or cut off past the lease and another worker took the unit
over) it cancels the running unit: the unit's own writes are fenced too (decision claims, the
cohort's replay lease), so stopping is about not wasting work, never about correctness.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from types import TracebackType

from sqlalchemy import Engine

from arena.core.clock import Clock
from arena.workers import queue, roster
from arena.workers.backoff import log_renewal_failure
from arena.workers.queue import Lease

log = logging.getLogger(__name__)


class LeaseKeeper:
    """A context manager: renews ``lease`` in a thread; ``lost`` is set if it could not."""

    def __init__(
        self,
        engine: Engine,
        lease: Lease,
        *,
        worker: str,
        clock: Clock,
        ttl: timedelta,
        on_lost: Callable[[], object],
    ) -> None:
        self._engine, self._lease, self._worker = engine, lease, worker
        self._clock, self._ttl, self._on_lost = clock, ttl, on_lost
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name=f"unit {lease.unit_id} lease", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _renew(self) -> None:
        while not self._stop.wait((self._ttl / 4).total_seconds()):
            try:
                held = queue.renew(self._engine, self._lease, self._clock.now(), self._ttl)
                roster.beat(self._engine, self._worker, self._clock.now(), self._lease.unit_id)
            except Exception as exc:  # a database blip: the next renewal retries well within the lease
                log_renewal_failure(log, f"renewing the lease of unit {self._lease.unit_id}", exc)
                continue
            if not held:
                self.lost.set()
                self._on_lost()
                return
