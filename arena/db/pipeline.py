"""Statements a PostgreSQL write unit sends without waiting for each one's answer (psycopg's
pipeline mode), so the unit waits for the server once where it waited once a statement.

A replay's write unit is a handful of small statements (the ledger fence's lock and count, an
INSERT or UPDATE of each table it writes, the COMMIT, and psycopg's BEGIN before them), and on
PostgreSQL each was a round trip: about 3,700 of a 20-agent replay, at 0.1-0.2 ms of waiting and
client work apiece, more than the server spent executing most of them. Here the writes whose
results nobody reads are held (``send``) and go to the server in one pipeline with what comes
next in the unit: its next statement that reads (the ``before_cursor_execute`` listener), the
fence's reads (``read_together``) or the COMMIT (the ``commit`` listener). The server still runs every
statement in the order given, each with its own snapshot, in the unit's one transaction: only
the waiting between them goes.

Why not SQLAlchemy's own execute inside ``pipeline()``: in pipeline mode a psycopg cursor holds no
result until the pipeline syncs, and SQLAlchemy reads ``cursor.description`` right after each
execute to decide whether the statement returns rows, so a SELECT would come back as a result
without rows. The pipeline runs on the driver connection instead, with statements already in the
driver's form: the SQL and parameters ``exec_driver_sql`` would hand psycopg.

Errors: psycopg raises a statement's error when the pipeline syncs; it is raised here as
SQLAlchemy's exception for that statement (``IntegrityError`` and the like, naming it), inside
the unit, before it commits; the transaction is then aborted and ``session_scope`` rolls it back.
Statements held by a unit that rolls back are dropped with it. SQLite holds nothing: it is in
the process, a statement costs it no round trip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Dialect, Engine, event
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_HELD = "arena_held_statements"

Statement = tuple[str, Any, bool]  # SQL, parameters, whether executemany


def install(engine: Engine) -> None:
    """Send a connection's held statements before anything else reaches the server on it, drop
    them when its transaction rolls back (a PostgreSQL engine, from ``make_engine``)."""
    event.listen(engine, "before_cursor_execute", _before_execute)
    event.listen(engine, "commit", _commit_held)
    event.listen(engine, "rollback", _drop_held)
    event.listen(engine.pool, "reset", _drop_held_on_reset)


def send(connection: Connection, sql: str, params: Any, *, many: bool = False) -> None:
    """Execute ``sql`` with ``params`` (the driver's form, as for ``exec_driver_sql``; a sequence
    of them with ``many``) in ``connection``'s transaction, whose result nobody reads. On
    PostgreSQL inside a transaction it is held and sent with the transaction's next statement or
    its commit; elsewhere it runs now."""
    if connection.dialect.name != "postgresql" or _autocommit(connection):
        connection.exec_driver_sql(sql, params)
        return
    connection.info.setdefault(_HELD, []).append((sql, params, many))


def read_together(session: Session, statements: Sequence[tuple[str, Any]]) -> list[list[tuple[Any, ...]]]:
    """Run the held statements and then ``statements`` (driver form, each returning rows) in one
    pipeline on PostgreSQL; the rows of each statement, in order. The server runs them one after
    the other, each with a snapshot taken when it starts, as if sent one by one."""
    connection = session.connection()
    cursors = _run(connection, [*_take_held(connection), *((sql, p, False) for sql, p in statements)])
    return [cursor.fetchall() for cursor in cursors[-len(statements) :]] if statements else []


def driver_form(dialect: Dialect, statement: ClauseElement, params: Mapping[str, Any]) -> tuple[str, Any]:
    """``statement`` (built once, without expanding or literal parameters) as ``read_together``
    takes it: its SQL for ``dialect`` and ``params`` through each parameter's bind processor, as
    SQLAlchemy's execute would pass them to the driver. Compiled once per statement and dialect."""
    key = (id(statement), dialect.name)
    if key not in _COMPILED:
        compiled = statement.compile(dialect=dialect)
        if not isinstance(compiled, SQLCompiler):
            raise TypeError(f"not a SQL statement: {statement}")
        odd = compiled.literal_execute_params or compiled.post_compile_params or compiled.escaped_bind_names
        if odd or dialect.positional:
            raise ValueError(f"not a statement with plain named parameters: {compiled.string}")
        processors = {
            name: bind.type.dialect_impl(dialect).bind_processor(dialect)
            for name, bind in compiled.binds.items()
        }
        _COMPILED[key] = (statement, compiled, processors)
    _, compiled, processors = _COMPILED[key]
    given = compiled.construct_params(params) or {}
    return compiled.string, {
        name: value if (process := processors.get(name)) is None else process(value)
        for name, value in given.items()
    }


_COMPILED: dict[tuple[int, str], tuple[ClauseElement, SQLCompiler, dict[str, Any]]] = {}


def _autocommit(connection: Connection) -> bool:
    return bool(connection.get_execution_options().get("isolation_level") == "AUTOCOMMIT")


def _take_held(connection: Connection) -> list[Statement]:
    held: list[Statement] = connection.info.pop(_HELD, [])
    return held


def _run(connection: Connection, statements: Sequence[Statement], *, commit: bool = False) -> list[Any]:
    """``statements`` (and a COMMIT) in one pipeline of the driver connection: one sync, one wait.
    A statement's error is raised as SQLAlchemy raises it for an ordinary execute. The engine's
    ``before_cursor_execute`` and ``after_cursor_execute`` listeners see each statement as they
    see SQLAlchemy's own (without an execution context), so what watches the statements of a
    unit (its tests, a profiler) still sees them all, in order."""
    driver = connection.connection.driver_connection
    if driver is None:
        raise RuntimeError("the connection is closed")
    events = connection.dispatch
    cursors = []
    try:
        with driver.pipeline():
            for sql, params, many in statements:
                cursor = driver.cursor()
                cursors.append(cursor)
                events.before_cursor_execute(connection, cursor, sql, params, None, many)
                if many:
                    cursor.executemany(sql, params)
                else:
                    cursor.execute(sql, params)
            if commit:
                driver.commit()
    except connection.dialect.loaded_dbapi.Error as exc:
        sql, params, many = _failed(statements, cursors)
        raise DBAPIError.instance(
            sql, params, exc, connection.dialect.loaded_dbapi.Error, dialect=connection.dialect, ismulti=many
        ) from exc
    for (sql, params, many), cursor in zip(statements, cursors, strict=True):
        events.after_cursor_execute(connection, cursor, sql, params, None, many)
    return cursors


def _failed(statements: Sequence[Statement], cursors: Sequence[Any]) -> Statement:
    """The statement whose error stopped the pipeline: the first without a result (those after
    it were skipped by the server); the COMMIT when every statement has one."""
    for statement, cursor in zip(statements, cursors, strict=False):
        if cursor.pgresult is None:
            return statement
    return ("COMMIT", None, False)


def _before_execute(
    connection: Connection, _cursor: Any, _sql: str, _params: Any, _context: Any, _many: bool
) -> None:
    _send_held(connection)


def _send_held(connection: Connection) -> None:
    held = _take_held(connection)
    if held:
        _run(connection, held)


def _commit_held(connection: Connection) -> None:
    """SQLAlchemy is about to commit: the held statements and the COMMIT go in one pipeline, and
    the driver's commit that follows finds no transaction open, which psycopg takes as nothing
    to do. Without held statements the commit is left to SQLAlchemy."""
    held = _take_held(connection)
    if held:
        _run(connection, held, commit=True)


def _drop_held(connection: Connection) -> None:
    connection.info.pop(_HELD, None)


def _drop_held_on_reset(_dbapi_connection: Any, record: Any, _state: Any) -> None:
    record.info.pop(_HELD, None)
