"""Counting a PostgreSQL unit's round trips: the messages after which the client waited."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from psycopg.pq import Trace
from sqlmodel import Session


@contextmanager
def waits(path: Path) -> Iterator[tuple[Callable[[Session], None], list[str]]]:
    """``watch(session)`` traces ``session``'s connection from then until the block ends (put the
    unit inside it, to see its commit); ``found`` then lists the messages after which the client
    waited for the server: a simple ``Query`` (psycopg's BEGIN and COMMIT outside a pipeline) or
    a ``Sync`` (the end of an extended-protocol statement, or of a pipeline). libpq's trace."""
    found: list[str] = []
    traced: list[Any] = []

    def watch(session: Session) -> None:
        driver: Any = session.connection().connection.driver_connection
        driver.pgconn.trace(trace.fileno())
        driver.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)
        traced.append(driver)

    with path.open("w") as trace:
        try:
            yield watch, found
        finally:
            for driver in traced:
                driver.pgconn.untrace()
    sent = [line.split("\t") for line in path.read_text().splitlines()]
    found += [f[2] for f in sent if len(f) > 2 and f[0] == "F" and f[2] in ("Query", "Sync")]
