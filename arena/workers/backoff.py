"""Retry database work while the database is unreachable: capped exponential backoff.

Workers outlive their database: one started before PostgreSQL is up, or cut off by a restart,
waits and carries on instead of exiting. Only connection failures are retried; a bad statement or
a missing table is a bug and raises at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError

T = TypeVar("T")
FIRST_BACKOFF = timedelta(seconds=0.5)
MAX_BACKOFF = timedelta(seconds=30)


def is_connection_error(exc: DBAPIError) -> bool:
    """A refused or dropped connection, not a bad statement or a conflict.

    psycopg raises OperationalError for a refused connection (no SQLSTATE), a dropped one (class
    08) and a server shutting down (57P01-57P03), but also for deadlocks, timeouts and a full
    disk, which waiting for the server would not cure; the SQLSTATE tells them apart."""
    if exc.connection_invalidated:
        return True
    code = getattr(exc.orig, "sqlstate", None)
    return isinstance(exc, OperationalError) and (code is None or code.startswith(("08", "57P")))


def retrying(
    work: Callable[[], T], *, say: Callable[[str], None], stop: threading.Event, tries: int | None = None
) -> T:
    """``work()``, retried after connection failures (``tries`` attempts, default unbounded); a
    ``stop`` set while waiting ends the wait by re-raising the last failure."""
    delay, attempt = FIRST_BACKOFF, 0
    while True:
        try:
            return work()
        except DBAPIError as exc:
            attempt += 1
            if not is_connection_error(exc) or (tries is not None and attempt >= tries):
                raise
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
            say(f"database unreachable ({reason}); retrying in {delay.total_seconds():g} s")
            if stop.wait(delay.total_seconds()):
                raise
            delay = min(delay * 2, MAX_BACKOFF)
