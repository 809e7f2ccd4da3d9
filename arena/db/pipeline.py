"""Statements a PostgreSQL write unit sends without waiting for each one's answer (psycopg's
pipeline mode), so the unit waits for the server once where it waited once a statement, and the
server executes its writes while the client prepares the next ones.

A replay's write unit is a handful of small statements (the ledger fence's lock and count, an
INSERT or UPDATE of each table it writes, the COMMIT, and psycopg's BEGIN before them), and on
PostgreSQL each was a round trip: about 3,700 of a 20-agent replay, each a wait for the server.
Here the writes whose results nobody reads (``send``) open a pipeline on the unit's connection
and go to the server at once, without waiting; the unit waits once, for all of them, at its next
statement that reads (the ``before_cursor_execute`` listener closes the pipeline first), at the
fence's reads (``read_together``, in the same pipeline) or at its COMMIT (the ``commit`` listener,
in the same pipeline). The server runs every statement in the order sent, each with its own
snapshot, in the unit's one transaction: only the waiting between them goes.

Why not SQLAlchemy's own execute inside ``pipeline()``: in pipeline mode a psycopg cursor holds no
result until the pipeline syncs, and SQLAlchemy reads ``cursor.description`` right after each
execute to decide whether the statement returns rows, so a SELECT would come back as a result
without rows. The pipeline runs on the driver connection instead, with statements already in the
driver's form: the SQL and parameters ``exec_driver_sql`` would hand psycopg.

Foreign keys: the arena's are deferred (checked at COMMIT, so an ORM flush may insert in any
order), and a COMMIT is a wait: the client can do nothing while the server checks them. A
transaction whose first statement goes in a pipeline (a write unit: a replay's marks, settlements
and rounds; a relaxed unit's ``SET LOCAL``, sent as it begins, does not count) makes them
immediate (``SET CONSTRAINTS ALL IMMEDIATE``, sent with that statement), so the server checks
each write's keys as the statement ends, while the client prepares the next one. Such units write
parents before children (positions before their fills, a snapshot before the day's close), any
ORM flush of theirs included; a violation is an ``IntegrityError``, never a silent one. A
transaction that begins with anything else keeps the deferred keys: making them immediate there
would check at once rows it wrote in an order the deferral allowed.

Errors: psycopg raises a statement's error once its result arrives (at the latest when the
pipeline closes); it is raised here as SQLAlchemy's exception for that statement
(``IntegrityError`` and the like, naming it), inside the unit, before it commits; the server
skips the unit's later statements, and ``session_scope`` rolls the transaction back. A unit that
rolls back closes its pipeline first, ignoring what it held. SQLite sends nothing ahead: it is in
the process, a statement costs it no round trip. Nor do connections the server ends when idle in
a transaction (workers', ``arena serve``'s): a session mid-pipeline does not count as idle
(``_ends_idle``).
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
    """Close a connection's open pipeline (waiting for what it sent) before anything else reaches
    the server on it, and commit in it; drop it when the transaction rolls back (a PostgreSQL
    engine, from ``make_engine``)."""
    _INSTALLED.add(engine.dialect)  # the engine's copies (``execution_options``) share its dialect
    event.listen(engine, "before_cursor_execute", _before_execute)
    event.listen(engine, "commit", _commit)
    event.listen(engine, "rollback", _discard)
    event.listen(engine.pool, "reset", _discard_on_reset)


def send(connection: Connection, sql: str, params: Any, *, many: bool = False, setting: bool = False) -> None:
    """Execute ``sql`` with ``params`` (the driver's form, as for ``exec_driver_sql``; a sequence
    of them with ``many``) in ``connection``'s transaction, whose result nobody reads. On
    PostgreSQL inside a transaction it goes to the server at once, in the connection's pipeline,
    and the unit waits for it with its next statement or its commit; elsewhere it runs now.
    ``setting``: a ``SET LOCAL`` sent as the transaction begins, which leaves the choice of
    immediate foreign keys to the unit's first statement (see the module)."""
    if not _pipelines(connection):
        connection.exec_driver_sql(sql, params)
        return
    _pipeline(connection, writes=not setting).execute(connection, (sql, params, many))


def unit_connection(session: Session) -> Connection:
    """``session``'s connection, once the ORM objects it holds pending are flushed (as autoflush
    does before a query): what a unit sends here reaches the server after what it added before,
    in the order the unit wrote them, which immediate foreign keys need (see the module). Inside
    ``no_autoflush`` nothing is flushed, as autoflush would not flush either."""
    if session.autoflush:
        session.flush()
    return session.connection()


def send_statement(session: Session, statement: UpdateBase, params: Mapping[str, Any]) -> None:
    """``send`` for a statement built once (as ``driver_form`` takes it) with its parameters: on
    PostgreSQL in the unit's pipeline, without waiting; elsewhere an ordinary execute."""
    dialect = session.get_bind().dialect
    if dialect.name != "postgresql":
        session.execute(statement, params)
        return
    send(unit_connection(session), *driver_form(dialect, statement, params))


def read_together(session: Session, statements: Sequence[tuple[str, Any]]) -> list[list[tuple[Any, ...]]]:
    """Run ``statements`` (driver form, see ``driver_form``; each returning rows) after what the
    unit sent already, in one pipeline, and wait once; the rows of each statement, in order. The
    server runs them one after the other, each with a snapshot taken when it starts, as if sent
    one by one. PostgreSQL only: a SQLite caller runs its statements as usual. A connection that
    does not pipeline (``_pipelines``) runs them one by one."""
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
    """Send ``query`` (a SELECT built once, as ``driver_form`` takes it) now, in the unit's
    transaction, and return a function giving its rows (as ``read_after_sent`` gives them). On
    PostgreSQL it goes in the unit's pipeline without waiting, and its answer comes with the unit's
    next wait (its next read, ``read_together``, or anything SQLAlchemy executes): a read the unit
    needs only after another costs no wait of its own. The function waits if nothing has since,
    and gives the same rows at every call; call it first while the unit is open (after its
    commit or rollback the connection is gone, and it raises). Elsewhere the query runs now."""
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
    """The rows of each of ``statements`` (SELECTs built once, as ``driver_form`` takes them, each
    with its parameters) run now, in order, in the unit's transaction, each value as SQLAlchemy's
    execute gives it (through its column's result processor). On PostgreSQL they go in the unit's
    pipeline after the writes it sent (``read_together``): the server runs them in the same
    order, and the unit waits once for all, not once for the writes and once for each read.
    Elsewhere ordinary executes."""
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
    """Whether ``url`` sets ``idle_in_transaction_session_timeout`` (``workers.queue.
    fenced_session_url``: the connections of workers and of ``arena serve``). Their fence is the
    server ending a session paused inside a transaction after one lease time, which frees its
    locks for the process that takes over. PostgreSQL counts a session as idle only once it has
    answered a Sync: in the middle of a pipeline (writes sent, the Sync not yet) it waits for the
    next message without that timeout, so a worker stopped there would hold its locks for as long
    as it is stopped. Such connections send every statement on its own."""
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
    """Close ``connection``'s pipeline (after a COMMIT in it), waiting for every result; the
    cursors of the statements it sent. A statement's error is raised as SQLAlchemy raises it for
    an ordinary execute. The engine's ``before_cursor_execute`` and ``after_cursor_execute``
    listeners see each statement as they see SQLAlchemy's own (without an execution context), so
    what watches the statements of a unit (its tests, a profiler) still sees them all, in order."""
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
    """SQLAlchemy executes a statement (it always has an execution context; those sent in the
    pipeline, announced to the same listeners, have none): what the pipeline sent goes first. A
    transaction that begins here keeps its deferred foreign keys."""
    if context is not None:
        connection.info.setdefault(_IMMEDIATE, False)
        _close(connection)


def _commit(connection: Connection) -> None:
    """SQLAlchemy is about to commit: with a pipeline open, the COMMIT goes in it, and the
    driver's commit that follows finds no transaction open, which psycopg takes as nothing to
    do. Without one the commit is left to SQLAlchemy."""
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
