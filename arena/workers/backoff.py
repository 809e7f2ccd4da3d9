"""Retry database work while the database is unreachable: capped exponential backoff.

Workers and ``arena serve`` outlive their database: one started before PostgreSQL is up, or cut
off by a restart, waits and carries on instead of exiting. Only connection failures are retried;
a bad statement or a missing table is a bug and raises at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError

T = TypeVar("T")
FIRST_BACKOFF = timedelta(seconds=0.5)
MAX_BACKOFF = timedelta(seconds=30)


def is_connection_error(exc: BaseException) -> bool:
    """A refused or dropped connection, not a bad statement or a conflict.

    psycopg raises OperationalError for a refused connection (no SQLSTATE), a dropped one (class
    08) and a server shutting down (57P01-57P03), but also for deadlocks, timeouts and a full
    disk, which waiting for the server would not cure; the SQLSTATE tells them apart."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    code = getattr(exc.orig, "sqlstate", None)
    return isinstance(exc, OperationalError) and (code is None or code.startswith(("08", "57P")))


def unreachable_reason(exc: DBAPIError) -> str:
    """The driver's first line about a lost connection (no statement, no parameters)."""
    return str(exc.orig).strip().splitlines()[0] if exc.orig and str(exc.orig).strip() else type(exc).__name__


def log_renewal_failure(logger: logging.Logger, what: str, exc: Exception) -> None:
    """Log a lease renewal that raised ``exc``: one warning line for a lost connection (an
    outage: the next renewal retries, and a cut longer than the lease ends in a takeover), the
    traceback for anything else (a bug)."""
    if isinstance(exc, DBAPIError) and is_connection_error(exc):
        logger.warning("%s failed: database unreachable (%s)", what, unreachable_reason(exc))
    else:
        logger.error("%s failed", what, exc_info=exc)


class Backoff:
    """The waits between attempts while the database stays unreachable: 0.5 s, 1 s, 2 s… 30 s."""

    def __init__(self) -> None:
        self.failures = 0
        self._next = FIRST_BACKOFF

    def failed(self) -> timedelta:
        """One more failed attempt: how long to wait before the next."""
        self.failures += 1
        delay, self._next = self._next, min(self._next * 2, MAX_BACKOFF)
        return delay

    def reset(self) -> bool:
        """An attempt succeeded; True if it ended an outage (earlier attempts had failed)."""
        ended, self.failures, self._next = self.failures > 0, 0, FIRST_BACKOFF
        return ended


def retrying(
    work: Callable[[], T], *, say: Callable[[str], None], stop: threading.Event, tries: int | None = None
) -> T:
    """``work()``, retried after connection failures (``tries`` attempts, default unbounded); a
    ``stop`` set while waiting ends the wait by re-raising the last failure."""
    backoff = Backoff()
    while True:
        try:
            return work()
        except DBAPIError as exc:
            if not is_connection_error(exc) or (tries is not None and backoff.failures + 1 >= tries):
                raise
            delay = backoff.failed()
            say(f"database unreachable ({unreachable_reason(exc)}); retrying in {delay.total_seconds():g} s")
            if stop.wait(delay.total_seconds()):
                raise
