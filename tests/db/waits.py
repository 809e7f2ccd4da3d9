"""Counting a PostgreSQL unit's round trips: the messages after which the client waited."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from psycopg.pq import Trace
from sqlalchemy import Engine, event
from sqlmodel import Session


@contextmanager
def waits(path: Path) -> Iterator[tuple[Callable[[Session], None], list[str]]]:
    """``watch(session)`` traces ``session``'s connection from then until the block ends (put the
    unit inside it, to see its commit); ``found`` then lists the messages after which the client
    waited for the server: a simple ``Query`` (psycopg's BEGIN and COMMIT outside a pipeline) or
    a ``Sync`` (the end of an extended-protocol statement, or of a pipeline). libpq's trace."""
    with _traced(path) as (trace, found):
        yield (lambda session: trace(session.connection().connection.driver_connection)), found


@contextmanager
def engine_waits(engine: Engine, path: Path) -> Iterator[list[str]]:
    """``waits`` of every connection ``engine`` hands out until the block ends: for a unit that
    opens its own session."""
    with _traced(path) as (trace, found):

        def checkout(driver: Any, _record: Any, _proxy: Any) -> None:
            trace(driver)

        event.listen(engine, "checkout", checkout)
        try:
            yield found
        finally:
            event.remove(engine, "checkout", checkout)


@contextmanager
def _traced(path: Path) -> Iterator[tuple[Callable[[Any], None], list[str]]]:
    found: list[str] = []
    traced: list[Any] = []

    def trace(driver: Any) -> None:
        driver.pgconn.trace(file.fileno())
        driver.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)
        traced.append(driver)

    with path.open("w") as file:
        try:
            yield trace, found
        finally:
            for driver in traced:
                driver.pgconn.untrace()
    sent = [line.split("\t") for line in path.read_text().splitlines()]
    found += [f[2] for f in sent if len(f) > 2 and f[0] == "F" and f[2] in ("Query", "Sync")]
