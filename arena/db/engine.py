"""Engines and units of work for SQLite (the local default) and PostgreSQL.

SQLite is tuned for several processes sharing one file (scheduler, dashboard, CLI): WAL journal
so readers never block the writer, ``busy_timeout`` so a writer waits for the lock instead of
failing, foreign keys on (SQLite leaves them off by default). The pysqlite driver's implicit
transactions are replaced by explicit ``BEGIN``: a unit of work that writes starts with
``BEGIN IMMEDIATE`` and takes the write lock up front, because a deferred transaction that later
tries to write can fail with "database is locked" without waiting.

Repository functions take a ``Session`` and never commit; the caller's ``session_scope`` commits
once, so an agent's round (claim, decision, fills) lands whole or not at all. On PostgreSQL a
write unit sends the writes whose results it does not read, and its COMMIT, in a pipeline that
it waits for once (``pipeline``); a failed write still raises in the unit, which rolls back.

On PostgreSQL every commit waits for its WAL record to reach the disk (``synchronous_commit``,
about 4 ms a commit on this project's test machine). ``relaxed_commits`` lets a caller whose
work can be redone after a server crash (a replay) skip that wait for its write units only; see
docs/storage.md "Commit durability of replays".
"""

from __future__ import annotations

import json
import os
import select
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from weakref import WeakKeyDictionary

from sqlalchemy import Dialect, Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, DisconnectionError

from arena.db import pipeline

if TYPE_CHECKING:  # imported where a unit of work starts: readers of scoring frames need no ORM
    from sqlmodel import Session

SQLITE_BUSY_TIMEOUT_MS = 30_000
_WAL_RETRY_MS = 50
_BEGIN_OPTION = "arena_sqlite_begin"
_FENCE_OPTION = "arena_write_fence"
_RELAXED_OPTION = "arena_relaxed_commits"
_PRELUDE_OPTION = "arena_write_prelude"

WriteFence = Callable[["Session"], None]


class WritePrelude(Protocol):
    """Rows a caller holds back to store with its next write unit (``with_prelude``)."""

    def write(self, session: Session) -> None:
        """Store the rows held back in ``session``, first thing in a write unit."""

    def written(self) -> None:
        """That unit committed: the rows it stored need not be stored again."""


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL; plain ``postgresql://``/``postgres://`` use the psycopg 3 driver."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ValueError("database URL is not a valid URL (expected e.g. sqlite:///path/arena.db)") from exc
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ValueError(f"database URL {redact_url(parsed)}: expected a sqlite:// or postgresql:// URL")
    if backend == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise ValueError("database URL: an in-memory SQLite database is not shared; give a file path")
    return parsed


def redact_url(url: str | URL) -> str:
    """The URL with its password masked, safe for logs and error messages."""
    return make_url(url).render_as_string(hide_password=True)


def make_engine(url: str | URL, *, echo: bool = False, pipelined: bool | None = None) -> Engine:
    """An engine for ``url`` (SQLite file or PostgreSQL); the SQLite folder is created if missing.

    ``pipelined``: on PostgreSQL, whether write units send their writes in a pipeline
    (``arena.db.pipeline``) or one statement at a time; ``None`` takes ``ARENA_PG_PIPELINE``.
    """
    parsed = normalize_url(url)
    serializer = partial(json.dumps, allow_nan=False, default=_refuse_json_value)
    if parsed.get_backend_name() == "postgresql":
        # READ COMMITTED whatever the server's or role's default: the claims and fences are written
        # for it, and ``reader``'s autocommit reads are equivalent to read transactions only at it.
        isolation = "READ COMMITTED"
        engine = create_engine(parsed, echo=echo, json_serializer=serializer, isolation_level=isolation)
        event.listen(engine, "checkout", partial(_check_alive, engine.dialect))
        event.listen(engine, "begin", _begin_postgres_transaction)
        if _pipelined() if pipelined is None else pipelined:
            pipeline.install(engine)
        return engine
    Path(str(parsed.database)).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, echo=echo, json_serializer=serializer)
    database = _SqliteFile(Path(str(parsed.database)))
    _SQLITE_FILES[engine.dialect] = database  # kept by the engine's copies, and through dispose()
    event.listen(engine, "connect", _configure_sqlite_connection)
    event.listen(engine, "connect", database.remember)
    event.listen(engine, "begin", partial(_begin_sqlite_transaction, database))
    return engine


def _pipelined() -> bool:
    """``ARENA_PG_PIPELINE`` (default on)."""
    from arena.core.settings import Settings  # here: settings pull pydantic-settings, which --help skips

    return Settings().pg_pipeline


class DatabaseGone(RuntimeError):
    """The SQLite file an engine opened was deleted or replaced while it ran: its open connections
    would go on writing into a file nobody can open again, so nothing more is written."""


def database_gone(engine: Engine) -> str | None:
    """Why ``engine``'s SQLite file is no longer the one it opened (deleted, or replaced by
    another file at its path), or None (also on PostgreSQL, whose server owns its files). One
    ``stat``: commands check it before they report success."""
    database = _SQLITE_FILES.get(engine.dialect)
    return database.problem() if database is not None else None


@dataclass
class _SqliteFile:
    """The SQLite file of an engine, known by its device and inode from the first connection on."""

    path: Path
    identity: tuple[int, int] | None = None

    def remember(self, _dbapi_connection: Any, _record: Any) -> None:
        if self.identity is None:
            found = os.stat(self.path)
            self.identity = (found.st_dev, found.st_ino)

    def problem(self) -> str | None:
        if self.identity is None:
            return None
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return self._lost("deleted")
        return None if (found.st_dev, found.st_ino) == self.identity else self._lost("replaced")

    def _lost(self, how: str) -> str:
        return f"the database file {self.path} was {how} while this command ran; nothing more was saved"


_SQLITE_FILES: WeakKeyDictionary[Dialect, _SqliteFile] = WeakKeyDictionary()


def writer(engine: Engine) -> Engine:
    """``engine`` whose transactions are write units: SQLite takes its write lock at ``BEGIN``; on
    PostgreSQL only a ``relaxed_commits`` engine's write units differ (they skip the flush wait)."""
    return engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})


def reader(engine: Engine, *, snapshot: bool = False) -> Engine:
    """``engine`` whose units of work only read. On PostgreSQL they run in autocommit: at READ
    COMMITTED (``make_engine`` sets it, whatever the server's default) every statement sees its
    own snapshot, in a transaction or not, so a read needs none, and leaving it out saves
    psycopg's ``BEGIN`` and the ``ROLLBACK`` (each a round trip, the rollback followed by
    ``DEALLOCATE ALL`` of the connection's prepared statements), about 370 units of a 20-agent
    replay. On SQLite a read keeps its ``BEGIN DEFERRED`` transaction: one snapshot for all its
    statements, and no write lock.

    ``snapshot``: the unit's statements must all see one moment, as rebuilding a ledger from its
    fills and then its position rows must (a commit landing between the two reads would show a
    position open in one and not the other). On PostgreSQL that unit runs as one REPEATABLE READ
    transaction; SQLite's read transaction is one snapshot already."""
    if engine.dialect.name == "postgresql":
        return engine.execution_options(isolation_level="REPEATABLE READ" if snapshot else "AUTOCOMMIT")
    return engine


def fenced(engine: Engine, fence: WriteFence) -> Engine:
    """``engine`` whose write units of work run ``fence`` just before committing; the fence
    raises to refuse the commit (``leases.LeaseFence``). The option travels with the engine
    object, so every function handed it is fenced without knowing."""
    return engine.execution_options(**{_FENCE_OPTION: fence})


def with_prelude(engine: Engine, prelude: WritePrelude) -> Engine:
    """``engine`` whose write units of work (``session_scope``) start with ``prelude.write``, in
    the same transaction: a caller buffering rows (a replay's marks of the days between two
    writes) stores them with the write that follows instead of committing them on their own. A
    unit that rolls back took them along, and the next one writes them again; ``prelude.written``
    is called only once a unit has committed. The option travels with the engine object, as
    ``fenced``'s does."""
    return engine.execution_options(**{_PRELUDE_OPTION: prelude})


def relaxed_commits(engine: Engine) -> Engine:
    """``engine`` whose write units of work (``session_scope``) on PostgreSQL commit without
    waiting for the WAL flush: ``SET LOCAL synchronous_commit = off`` in each. A server or machine
    crash can then lose the last commits (PostgreSQL: up to three ``wal_writer_delay``, 0.6 s by
    default), never half of one and never an earlier one without the later: the database comes
    back consistent, as of a moment a little before the crash. Only for work that can be redone
    from what the database still holds (a replay resumes after its last stored mark); never for
    live cohorts. No-op on SQLite, whose WAL with ``synchronous = NORMAL`` already commits
    without a flush. The option travels with the engine object, as ``fenced``'s does."""
    return engine.execution_options(**{_RELAXED_OPTION: True})


@contextmanager
def session_scope(engine: Engine, *, write: bool = True, snapshot: bool = False) -> Iterator[Session]:
    """One unit of work: commits once when the block ends, rolls back if it raises.

    ``write=True`` takes SQLite's write lock at the start (``BEGIN IMMEDIATE``); pass
    ``write=False`` for read-only work such as dashboards so they never queue behind writers
    (``reader``: on PostgreSQL without a transaction; with ``snapshot``, in one snapshot).
    On a ``fenced`` engine a write unit checks its fence in the same transaction, last; on a
    ``with_prelude`` engine it stores the prelude's rows first.
    """
    options = engine.get_execution_options() if write else {}
    fence: WriteFence | None = options.get(_FENCE_OPTION)
    prelude: WritePrelude | None = options.get(_PRELUDE_OPTION)
    from sqlmodel import Session  # here, not at the top: see the TYPE_CHECKING import

    bound = writer(engine) if write else reader(engine, snapshot=snapshot)
    with Session(bound, expire_on_commit=False) as session, session.begin():
        if prelude is not None:
            prelude.write(session)
        yield session
        if fence is not None:
            fence(session)
    if prelude is not None:
        prelude.written()


def _configure_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # no implicit BEGIN/COMMIT from pysqlite: see _begin
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        _enable_wal(cursor)
        cursor.execute("PRAGMA synchronous = NORMAL")  # durable enough with WAL, much faster commits
    finally:
        cursor.close()


def _enable_wal(cursor: sqlite3.Cursor) -> None:
    """Put the file in WAL mode (a property of the file, so usually already done).

    The switch needs every other connection gone and, unlike ordinary statements, fails at once
    with "database is locked" instead of honouring ``busy_timeout``: processes opening a new
    database together would fail, so it is retried here for as long as the busy timeout.
    """
    if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    for _ in range(SQLITE_BUSY_TIMEOUT_MS // _WAL_RETRY_MS):
        try:
            (mode,) = cursor.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
            time.sleep(_WAL_RETRY_MS / 1000)
            continue
        if str(mode).lower() != "wal":
            raise RuntimeError(
                f"SQLite refused WAL journal mode (got {mode!r}); is the file on a network drive?"
            )
        return
    raise RuntimeError(f"SQLite database stayed locked for {SQLITE_BUSY_TIMEOUT_MS} ms; could not enable WAL")


def _begin_sqlite_transaction(database: _SqliteFile, connection: Connection) -> None:
    """``BEGIN``; a write unit first checks that the file is still the one opened (one ``stat``),
    so a run whose database was deleted stops at its next write instead of writing into it."""
    mode = connection.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
    if mode == "IMMEDIATE":
        problem = database.problem()
        if problem is not None:
            raise DatabaseGone(problem)
    connection.exec_driver_sql(f"BEGIN {mode}")


def _check_alive(dialect: Dialect, dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Hand out a pooled PostgreSQL connection only if it still reaches the server, so a long
    ``arena replay`` or a worker carries on through a database restart between two of its
    transactions. An idle connection receives nothing unless the server spoke first: a restart
    (or a proxy or firewall cutting the connection) sends an error and closes the socket, which
    makes it readable. So a quiet socket is taken as alive without a round trip, and only a
    readable one is pinged (it may also hold a harmless notice); a failed ping raises
    ``DisconnectionError``, on which the pool drops the connection and opens a new one.

    SQLAlchemy's ``pool_pre_ping`` pings at every checkout instead: about 800 round trips of a
    20-agent replay, each waiting for the server. What neither detects is a server that vanished
    without closing the connection (its host lost power): the next statement then fails, or
    waits for the operating system's TCP timeout, as the ping would have."""
    if dbapi_connection.closed:
        raise DisconnectionError("the connection is closed")
    quiet = select.poll()  # not select.select: it refuses descriptors above 1023
    quiet.register(dbapi_connection.fileno(), select.POLLIN)
    if not quiet.poll(0):
        return
    try:
        dialect.do_ping(dbapi_connection)
    except Exception as exc:
        raise DisconnectionError(f"the connection no longer reaches the server: {exc}") from exc


def _begin_postgres_transaction(connection: Connection) -> None:
    """A write unit of a ``relaxed_commits`` engine: this transaction's commit skips the WAL flush
    wait. ``SET LOCAL`` ends with the transaction, so the pooled connection carries nothing over."""
    options = connection.get_execution_options()
    if options.get(_RELAXED_OPTION) and options.get(_BEGIN_OPTION) == "IMMEDIATE":
        pipeline.send(connection, "SET LOCAL synchronous_commit = off", None, setting=True)  # no wait


def _refuse_json_value(value: object) -> object:
    if isinstance(value, Decimal):
        raise TypeError(
            f"Decimal {value} in a JSON column: store it as a string (arena.db.types.decimals_to_json)"
        )
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
