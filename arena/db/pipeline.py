"""PostgreSQL write units that send statements without waiting for each answer (psycopg's pipeline).

``send`` (and ``send_statement``) executes a write whose result nobody reads: on PostgreSQL, in a
transaction, it goes to the server at once in the connection's pipeline, and the unit waits once,
at its next read (``read_together``, ``read_after_sent``, ``read_later`` or anything SQLAlchemy
executes) or at its COMMIT. Elsewhere (SQLite; connections the server ends when idle in a
transaction, ``_ends_idle``) every statement runs at once, as an ordinary execute.

Contract for a transaction whose first statement is sent here: write parents before children
(its foreign keys are checked as each statement ends, not at COMMIT). Never read a sent write's
result. A failed statement is
raised as SQLAlchemy's exception for it, inside the unit, which then rolls back. ``install`` puts
the listeners on a PostgreSQL engine. Why this exists and how it keeps ordering and errors:
docs/design/write-pipeline.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any
from weakref import WeakSet

from sqlalchemy import Dialect, Engine, Select, event
from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement, UpdateBase

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_OPEN = "arena_open_pipeline"
# Whether this transaction's foreign keys are checked as statements end (True, its first statement
# was pipelined) or at COMMIT (False, it began otherwise); absent while it has run nothing.
_IMMEDIATE = "arena_keys_immediate"
_CHECK_NOW = ("SET CONSTRAINTS ALL IMMEDIATE", None, False)

Statement = tuple[str, Any, bool]  # SQL, parameters, whether executemany


def install(engine: Engine) -> None:
    """Put the pipeline's listeners on a PostgreSQL ``engine`` (``make_engine`` does).

    A connection's open pipeline is then closed (waiting for what it sent) before anything else
    reaches the server, commits in it, and is dropped when the transaction rolls back.
    """
    _INSTALLED.add(engine.dialect)  # the engine's copies (``execution_options``) share its dialect
    event.listen(engine, "before_cursor_execute", _before_execute)
    event.listen(engine, "commit", _commit)
    event.listen(engine, "rollback", _discard)
    event.listen(engine.pool, "reset", _discard_on_reset)


def send(connection: Connection, sql: str, params: Any, *, many: bool = False, setting: bool = False) -> None:
    """Execute ``sql`` with ``params`` in ``connection``'s transaction; nobody reads the result.

    ``sql`` and ``params`` are in the driver's form, as for ``exec_driver_sql`` (a sequence of
    parameter sets with ``many``). ``setting``: a ``SET LOCAL`` sent as the transaction begins; it
    leaves the choice of immediate foreign keys to the unit's first write.
    """
    if not _pipelines(connection):
        connection.exec_driver_sql(sql, params)
        return
    _pipeline(connection, writes=not setting).execute(connection, (sql, params, many))


def unit_connection(session: Session) -> Connection:
    """``session``'s connection, once its pending ORM objects are flushed (unless ``no_autoflush``).

    What a unit sends on it then reaches the server after what it added before, in the order
    written, as immediate foreign keys need.
    """
    if session.autoflush:
        session.flush()
    return session.connection()


def send_statement(session: Session, statement: UpdateBase, params: Mapping[str, Any]) -> None:
    """``send`` for a statement built once (as ``driver_form`` takes it), with its parameters."""
    dialect = session.get_bind().dialect
    if dialect.name != "postgresql":
        session.execute(statement, params)
        return
    send(unit_connection(session), *driver_form(dialect, statement, params))


def read_together(session: Session, statements: Sequence[tuple[str, Any]]) -> list[list[tuple[Any, ...]]]:
    """The rows of each of ``statements`` (driver form, each returning rows), waiting once for all.

    They run after what the unit sent already, one after the other, each with a snapshot taken
    when it starts, as if sent one by one. PostgreSQL only; a connection that does not pipeline
    (``_pipelines``) runs them one by one.
    """
    return [rows for rows, _ in _answered(session, statements)]


def _answered(session: Session, statements: Sequence[tuple[str, Any]]) -> list[tuple[list[Any], list[Any]]]:
    """``read_together``'s rows of each statement, with the type code (the server's type) of each
    of its columns, which some result processors need (PostgreSQL's numeric: ``_processed``)."""
    connection = unit_connection(session)
    if not _pipelines(connection):
        answers = []
        for sql, params in statements:
            result = connection.exec_driver_sql(sql, params)
            types = _type_codes(result.cursor.description)
            answers.append(([tuple(row) for row in result], types))
        return answers
    pipeline = _pipeline(connection)
    for sql, params in statements:
        pipeline.execute(connection, (sql, params, False))
    cursors = _close(connection)
    return [_rows_and_types(cursor) for cursor in cursors[len(cursors) - len(statements) :]]


def _rows_and_types(cursor: Any) -> tuple[list[Any], list[Any]]:
    return cursor.fetchall(), _type_codes(cursor.description)


def _type_codes(description: Sequence[Sequence[Any]]) -> list[Any]:
    return [column[1] for column in description]  # PEP 249: a column's second item, its type code


def read_later(
    session: Session, query: Select[*tuple[Any, ...]], params: Mapping[str, Any]
) -> Callable[[], list[tuple[Any, ...]]]:
    """Send ``query`` (a SELECT built once) now; the returned function gives its rows.

    The rows are as ``read_after_sent`` gives them, the same at every call. Call the function
    first while the unit is open: after its commit or rollback it raises. On PostgreSQL the
    answer comes with the unit's next wait, so a read needed only later costs no wait of its own;
    elsewhere the query runs now.
    """
    dialect = session.get_bind().dialect
    connection = unit_connection(session)
    if not _pipelines(connection):
        now = [tuple(row) for row in session.execute(query, params)]
        return lambda: now
    pipeline = _pipeline(connection)
    pipeline.execute(connection, (*driver_form(dialect, query, params), False))
    cursor = pipeline.sent[-1][1]
    read: list[list[tuple[Any, ...]]] = []  # the answer, once read

    def answer() -> list[tuple[Any, ...]]:
        if not read:
            if connection.info.get(_OPEN) is pipeline:
                _close(connection)
            read.append(_processed(dialect, query, *_rows_and_types(cursor)))
        return read[0]

    return answer


def read_after_sent(
    session: Session, statements: Sequence[tuple[Select[*tuple[Any, ...]], Mapping[str, Any]]]
) -> list[list[tuple[Any, ...]]]:
    """The rows of each of ``statements`` (SELECTs built once, with their parameters), run now, in order.

    Values come as SQLAlchemy's execute gives them (through each column's result processor). On
    PostgreSQL they follow the unit's sent writes in its pipeline: one wait for all.
    """
    dialect = session.get_bind().dialect
    if dialect.name != "postgresql":
        return [[tuple(row) for row in session.execute(query, params)] for query, params in statements]
    answers = _answered(session, [driver_form(dialect, query, params) for query, params in statements])
    return [
        _processed(dialect, query, rows, types)
        for (query, _), (rows, types) in zip(statements, answers, strict=True)
    ]


def _processed(
    dialect: Dialect, query: Select[*tuple[Any, ...]], rows: Sequence[tuple[Any, ...]], types: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """``rows`` through the result processors of ``query``'s columns, as SQLAlchemy's execute
    would pass them, each given its column's type code from the driver (``types``)."""
    processors = [
        c.type.dialect_impl(dialect).result_processor(dialect, code)
        for c, code in zip(query.selected_columns, types, strict=True)
    ]
    return [
        tuple(
            value if process is None else process(value)
            for process, value in zip(processors, row, strict=True)
        )
        for row in rows
    ]


def driver_form(dialect: Dialect, statement: ClauseElement, params: Mapping[str, Any]) -> tuple[str, Any]:
    """``statement``'s SQL for ``dialect`` and ``params`` as SQLAlchemy would pass them to the driver.

    ``statement`` is built once, without expanding or literal parameters (``ValueError``
    otherwise); it is compiled once per dialect.
    """
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
_INSTALLED: WeakSet[Dialect] = WeakSet()


def _pipelines(connection: Connection) -> bool:
    """Whether ``connection`` sends its unit's writes in a pipeline: on an engine with the pipeline
    installed, in a transaction, unless the server ends its sessions left idle in a transaction
    (``_ends_idle``)."""
    return (
        connection.dialect in _INSTALLED
        and connection.get_execution_options().get("isolation_level") != "AUTOCOMMIT"
        and not _ends_idle(connection.engine.url)
    )


@cache
def _ends_idle(url: URL) -> bool:
    """Whether ``url`` sets ``idle_in_transaction_session_timeout`` (``workers.queue.fenced_session_url``)."""
    # That timeout is the fence of workers and ``arena serve``; PostgreSQL counts a session as idle
    # only after a Sync, so mid-pipeline a stopped worker would keep its locks: never pipeline.
    options = url.query.get("options") or ()
    return "idle_in_transaction_session_timeout" in " ".join(
        (options,) if isinstance(options, str) else options
    )


@dataclass
class _Pipeline:
    """A pipeline open on a connection's driver: the statements sent in it and their cursors."""

    driver: Any
    stack: ExitStack
    sent: list[tuple[Statement, Any]] = field(default_factory=list)

    def execute(self, connection: Connection, statement: Statement) -> None:
        sql, params, many = statement
        cursor = self.driver.cursor()
        self.sent.append((statement, cursor))
        connection.dispatch.before_cursor_execute(connection, cursor, sql, params, None, many)
        try:
            if many:
                cursor.executemany(sql, params)
            else:
                cursor.execute(sql, params)
        except connection.dialect.loaded_dbapi.Error as exc:  # an earlier statement's, arrived meanwhile
            _abandon(connection.info)
            raise _error(connection, self.sent, exc) from exc


def _pipeline(connection: Connection, *, writes: bool = True) -> _Pipeline:
    """The pipeline open on ``connection``, opened if none is; when the transaction's first
    statement ``writes``, its foreign keys are made immediate first."""
    pipeline: _Pipeline | None = connection.info.get(_OPEN)
    if pipeline is None:
        driver = connection.connection.driver_connection
        if driver is None:
            raise RuntimeError("the connection is closed")
        stack = ExitStack()
        stack.enter_context(driver.pipeline())
        pipeline = connection.info[_OPEN] = _Pipeline(driver, stack)
    if writes and _IMMEDIATE not in connection.info:
        connection.info[_IMMEDIATE] = True
        pipeline.execute(connection, _CHECK_NOW)
    return pipeline


def _close(connection: Connection, *, commit: bool = False) -> list[Any]:
    """Close ``connection``'s pipeline (after a COMMIT in it, with ``commit``), waiting for every result.

    Returns the cursors of the statements it sent; a statement's error is raised as SQLAlchemy
    raises it for an ordinary execute.
    """
    # The engine's cursor listeners see each statement (without an execution context), so what
    # watches a unit's statements (its tests, a profiler) sees them all, in order.
    pipeline: _Pipeline | None = connection.info.pop(_OPEN, None)
    if pipeline is None:
        return []
    try:
        with pipeline.stack:
            if commit:  # a statement, not the driver's commit(), which syncs before the pipeline ends
                pipeline.driver.cursor().execute("COMMIT")
    except connection.dialect.loaded_dbapi.Error as exc:
        if commit:  # SQLAlchemy ends its transaction when its commit raises: end the server's too
            with suppress(connection.dialect.loaded_dbapi.Error):
                pipeline.driver.rollback()
        raise _error(connection, pipeline.sent, exc) from exc
    for (sql, params, many), cursor in pipeline.sent:
        connection.dispatch.after_cursor_execute(connection, cursor, sql, params, None, many)
    return [cursor for _, cursor in pipeline.sent]


def _error(connection: Connection, sent: Sequence[tuple[Statement, Any]], exc: Exception) -> DBAPIError:
    """SQLAlchemy's exception for ``exc``, naming the statement that failed: the first without a
    result (the server skipped those after it); the COMMIT when every statement has one."""
    unanswered = (statement for statement, cursor in sent if cursor.pgresult is None)
    sql, params, many = next(unanswered, ("COMMIT", None, False))
    error = connection.dialect.loaded_dbapi.Error
    wrapped = DBAPIError.instance(sql, params, exc, error, dialect=connection.dialect, ismulti=many)
    assert isinstance(wrapped, DBAPIError)  # noqa: S101 - a driver error is always wrapped as one
    return wrapped


def _before_execute(
    connection: Connection, _cursor: Any, _sql: str, _params: Any, context: Any, _many: bool
) -> None:
    """Listener: before SQLAlchemy executes a statement, close the pipeline so what it sent goes first."""
    # Only SQLAlchemy's own statements have an execution context; a transaction beginning with one
    # keeps its deferred foreign keys.
    if context is not None:
        connection.info.setdefault(_IMMEDIATE, False)
        _close(connection)


def _commit(connection: Connection) -> None:
    """Listener: with a pipeline open, send the COMMIT in it (the driver's commit then has nothing to do)."""
    connection.info.pop(_IMMEDIATE, None)  # the transaction ends, and SET CONSTRAINTS with it
    if _OPEN in connection.info:
        _close(connection, commit=True)


def _discard(connection: Connection) -> None:
    if connection.invalidated:  # its driver connection is gone, the pipeline with it
        return
    _abandon(connection.info)


def _discard_on_reset(_dbapi_connection: Any, record: Any, _state: Any) -> None:
    _abandon(record.info)


def _abandon(info: dict[str, Any]) -> None:
    """Close a pipeline whose transaction rolls back; what it sent is rolled back with it."""
    info.pop(_IMMEDIATE, None)
    pipeline: _Pipeline | None = info.pop(_OPEN, None)
    if pipeline is not None:
        with suppress(Exception):  # the unit raised its error already, or rolls back for another
            pipeline.stack.close()
