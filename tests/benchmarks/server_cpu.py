"""CPU time of the PostgreSQL backends serving one database, for benchmarks that run the server on
this machine: the client's CPU alone hides the half of a PostgreSQL replay spent in the server.

Each backend is a process of its own; ``/proc/<pid>/stat`` holds its user and system time. A
backend's figures vanish when its client disconnects, so ``ServerCpu`` samples the database's
backends while the work runs and keeps each one's last reading: the total misses at most one
sampling interval per backend (its last moments and its exit), a lower bound.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType

from sqlalchemy import URL, create_engine, text

_TICK = os.sysconf("SC_CLK_TCK")
_BACKENDS = text(
    "SELECT pid FROM pg_stat_activity WHERE datname = :name AND backend_type = 'client backend' "
    "AND pid <> pg_backend_pid()"
)


def backend_cpu(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid``; None when it is gone (or not on this machine)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


class ServerCpu:
    """``with ServerCpu(url) as cpu: ...`` then ``cpu.seconds``: the CPU the database's backends
    (other than the sampler's own) used while the block ran, sampled every ``every`` seconds."""

    def __init__(self, database: URL, every: float = 0.2) -> None:
        self._engine = create_engine(database.set(query={}), isolation_level="AUTOCOMMIT")
        self._name = database.database
        self._every = every
        self._start: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.seconds = 0.0

    def __enter__(self) -> ServerCpu:
        self._sample(first=True)
        self._thread.start()
        return self

    def __exit__(
        self, _type: type[BaseException] | None, _exc: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self._engine.dispose()
        self.seconds = sum(cpu - self._start.get(pid, 0.0) for pid, cpu in self._last.items())

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self._sample()

    def _sample(self, *, first: bool = False) -> None:
        with self._engine.connect() as connection:
            pids = list(connection.execute(_BACKENDS, {"name": self._name}).scalars())
        for pid in pids:
            cpu = backend_cpu(pid)
            if cpu is None:
                continue
            if first:
                self._start[pid] = cpu
            self._last[pid] = cpu
