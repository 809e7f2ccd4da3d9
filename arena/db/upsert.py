"""Idempotent writes keyed on a unique constraint, correct on SQLite and PostgreSQL alike.

``insert_ignore`` and ``upsert`` use ``INSERT ... ON CONFLICT``, so the database settles a race
between two writers (a check-then-insert would let two syncs insert one market twice). Both run
in the caller's session and never commit. ``write_rows`` is their bulk path, also used directly.
Why the bulk path binds column by column and sends arrays: docs/design/bulk-writes.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import JSON, Column, Dialect, Table, func
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.schema import CallableColumnDefault, ScalarElementColumnDefault
from sqlalchemy.types import TypeEngine
from sqlmodel import Session

from arena.db.keyed_update import array_literal, fits_array_literal
from arena.db.models import ArenaTable
from arena.db.pipeline import send, unit_connection

Row = Mapping[str, Any] | ArenaTable


def insert_ignore(
    session: Session,
    model: type[ArenaTable],
    rows: Iterable[Row],
    *,
    on: Sequence[str],
    any_key: bool = False,
    count: bool = True,
) -> int:
    """Insert rows whose key ``on`` (the columns of a unique constraint) is new; skip the rest.

    Rows are dicts of column values or unsaved table objects. ``any_key``: skip a row that collides
    on any unique constraint, not only ``on`` (a table with a second unique key that two processes
    may write at once: PostgreSQL settles races only on the conflict target). Returns how many rows
    were inserted, or 0 with ``count=False`` (no RETURNING: the bulk path).
    """
    table = _table(model)
    params = [_params(table, row) for row in rows]
    if not params:
        return 0

    def statement() -> Any:
        insert = _insert(session, table)
        return (
            insert.on_conflict_do_nothing()
            if any_key
            else insert.on_conflict_do_nothing(index_elements=list(on))
        )

    return _run(session, statement, params, table, count, shape=("ignore", tuple(on), any_key))


def upsert(
    session: Session,
    model: type[ArenaTable],
    rows: Iterable[Row],
    *,
    on: Sequence[str],
    update: Sequence[str] | None = None,
    if_greater: str | None = None,
    count: bool = True,
) -> int:
    """Insert rows, or update the row already holding the same key ``on``.

    ``update``: the columns an update writes (default: every given column not in ``on``);
    ``recorded_at`` is restamped. ``if_greater``: a column that only grows; a stored row is
    updated only when the new value there is greater, so out-of-order writers keep the maximum.
    Rows repeating a key are collapsed (the last wins, or the greatest ``if_greater``). Returns how
    many rows were written, or 0 with ``count=False``.
    """
    table = _table(model)
    given = [_params(table, row) for row in rows]
    if if_greater is not None:
        given.sort(key=lambda p: p[if_greater])  # stable: the greatest of a key comes last
    params = list({tuple(p.get(c) for c in on): p for p in given}.values())
    if not params:
        return 0
    columns = update if update is not None else [c for c in params[0] if c not in on]

    def statement() -> Any:
        stmt = _insert(session, table)
        assignments: dict[str, Any] = {c: stmt.excluded[c] for c in columns}
        if "recorded_at" in table.c and "recorded_at" not in assignments:
            assignments["recorded_at"] = func.current_timestamp()
        where = None if if_greater is None else table.c[if_greater] < stmt.excluded[if_greater]
        return stmt.on_conflict_do_update(index_elements=list(on), set_=assignments, where=where)

    shape = ("upsert", tuple(on), tuple(columns), if_greater)
    return _run(session, statement, params, table, count, shape=shape)


def _table(model: type[ArenaTable]) -> Table:
    table = model.__table__  # type: ignore[attr-defined]
    assert isinstance(table, Table)
    return table


def _insert(session: Session, table: Table) -> Any:
    """The dialect's INSERT, which knows ON CONFLICT (same syntax on SQLite 3.24+ and PostgreSQL)."""
    dialect = session.get_bind().dialect.name
    return postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)


def _params(table: Table, row: Row) -> dict[str, Any]:
    """Column values of ``row``; unset keys and database-stamped columns are left to their defaults."""
    if isinstance(row, Mapping):
        return dict(row)
    values = {column.name: getattr(row, column.key) for column in table.columns}
    return {
        name: value
        for name, value in values.items()
        if value is not None or not (table.c[name].primary_key or table.c[name].server_default is not None)
    }


def _run(
    session: Session,
    statement: Callable[[], Any],
    params: list[dict[str, Any]],
    table: Table,
    count: bool,
    *,
    shape: tuple[object, ...],
) -> int:
    """Run ``statement()`` for every row; how many were written, or 0 without ``count``."""
    # Counting needs RETURNING (skipped conflicts return no row); without it, the bulk path. The
    # statement is built only when needed: building it costs more than a small write.
    if count:
        result = session.exec(statement().returning(*table.primary_key.columns), params=params)
        return len(result.all())
    write_rows(session, statement, params, table, shape=shape)
    return 0


def write_rows(
    session: Session,
    statement: Callable[[], Any],
    rows: Sequence[Mapping[str, Any]],
    table: Table,
    *,
    shape: tuple[object, ...],
) -> None:
    """Execute ``statement()`` (an INSERT into ``table``, maybe with ON CONFLICT) for every row.

    ``shape`` names what else, besides the table, the columns and the dialect, decides the SQL
    (e.g. the conflict target): it is compiled once per shape. Nothing reads the result, so on
    PostgreSQL the write joins the unit's pipeline (``pipeline.send``).
    """
    # Rows giving the same columns skip SQLAlchemy's per-row handling: one statement of arrays on
    # PostgreSQL (``unnest_insert``), else one executemany bound column by column.
    if not rows:
        return
    keys = rows[0].keys()
    connection = unit_connection(session)
    form = None
    if all(r.keys() == keys for r in rows):
        rows = with_python_defaults(table, rows)
        form = driver_form(connection.dialect, statement, table, tuple(rows[0].keys()), shape)
    if form is None:
        session.execute(statement(), list(rows))
        return
    sql, names, processors = form
    if connection.dialect.name == "postgresql":
        columns = [[f(r[n]) for r in rows] for n, f in zip(names, processors, strict=True)]
        if all(map(fits_array_literal, columns)):
            unnest = unnest_insert(connection.dialect, table, sql, names)
            send(connection, unnest, tuple(map(array_literal, columns)))
            return
    bound: list[Any]
    if connection.dialect.positional:  # column by column: no Python frame per row, none per plain value
        per_column = [_bound_column(rows, n, f) for n, f in zip(names, processors, strict=True)]
        bound = list(zip(*per_column, strict=True))
    else:
        bound = [{n: f(r[n]) for n, f in zip(names, processors, strict=True)} for r in rows]
    send(connection, sql, bound, many=True)


def _bound_column(
    rows: Sequence[Mapping[str, Any]], name: str, processor: Callable[[Any], Any]
) -> Iterator[Any]:
    """Column ``name`` of ``rows`` through its bind processor (skipped where it is the identity)."""
    values = map(itemgetter(name), rows)
    return values if processor is _same else map(processor, values)


def with_python_defaults(table: Table, rows: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """``rows`` (all giving the same columns) with the left-out columns' Python defaults filled in.

    A scalar default is used as is, a default factory called for each row. Rows come back as given
    when a left-out column's default is SQL, which only SQLAlchemy's path evaluates.
    """
    # A left-out Python default would otherwise send the whole write down SQLAlchemy's row-by-row
    # path (a round's new decisions leave their results to their defaults).
    missing = [c for c in table.columns if c.name not in rows[0] and c.default is not None]
    if not missing or not all(isinstance(c.default, _PYTHON_DEFAULTS) for c in missing):
        return rows
    return [{**row, **{c.name: _default(c) for c in missing}} for row in rows]


_PYTHON_DEFAULTS = (ScalarElementColumnDefault, CallableColumnDefault)


def _default(column: Column[Any]) -> Any:
    default = column.default
    if isinstance(default, CallableColumnDefault):
        return default.arg(None)  # type: ignore[arg-type]  # no context: see with_python_defaults
    assert isinstance(default, ScalarElementColumnDefault)
    return default.arg


DriverForm = tuple[str, tuple[str, ...], tuple[Callable[[Any], Any], ...]]


def driver_form(
    dialect: Dialect,
    statement: Callable[[], Any],
    table: Table,
    keys: tuple[str, ...],
    shape: tuple[object, ...],
) -> DriverForm | None:
    """``statement()`` compiled for rows giving ``keys``: its SQL, parameter columns and their processors.

    The parameter columns are in the driver's order. ``None`` when SQLAlchemy must fill in
    something itself (a Python default, a parameter that is not a given column): such statements
    keep the ordinary path. Compiled once per shape and dialect.
    """
    # compiled as for an executemany: a one-row INSERT would add ``RETURNING id``, which nobody reads
    cache_key = (dialect.name, dialect.driver, table.name, keys, shape)
    if cache_key not in _FORMS:
        compiled = statement().compile(dialect=dialect, column_keys=list(keys), for_executemany=True)
        names = tuple(compiled.positiontup if dialect.positional else compiled.binds)
        plain = (
            not compiled.insert_prefetch
            and not compiled.escaped_bind_names
            and all(n in keys and n in table.c for n in names)
        )
        _FORMS[cache_key] = (
            (compiled.string, names, column_processors(table, names, dialect)) if plain else None
        )
    return _FORMS[cache_key]


_FORMS: dict[tuple[object, ...], DriverForm | None] = {}


def unnest_insert(dialect: Dialect, table: Table, sql: str, names: tuple[str, ...]) -> str:
    """``sql`` (a one-row INSERT from ``driver_form``) taking its rows from one array per column.

    The result is ``INSERT .. SELECT * FROM unnest(..) .. ON CONFLICT ..``: one statement, one
    plan and one round trip for every row, the arrays sent as text (``keyed_update.array_literal``).
    ON CONFLICT holds within it as across statements: DO NOTHING skips a row whose key an earlier
    row of the same arrays took.
    """
    shape = (dialect.name, table.name, sql, names)
    if shape not in _UNNEST:
        head, values = sql.split(" VALUES (", 1)
        given = ", ".join(dialect.identifier_preparer.quote(n) for n in names)
        assert head.endswith(f"({given})"), f"columns not in the parameters' order: {sql}"
        tail = values[_closing(values) + 1 :]
        assert "%(" not in tail, f"a parameter outside VALUES: {sql}"
        arrays = ", ".join(f"%s::{table.c[n].type.compile(dialect=dialect)}[]" for n in names)
        # SQLAlchemy's own compiled statement around the arrays; every value is a parameter.
        _UNNEST[shape] = f"{head} SELECT * FROM unnest({arrays}){tail}"  # noqa: S608
    return _UNNEST[shape]


_UNNEST: dict[tuple[object, ...], str] = {}


def _closing(text: str) -> int:
    """The index of the parenthesis closing one already open before ``text`` (casts such as
    ``NUMERIC(18, 6)`` nest inside a VALUES list)."""
    depth = 1
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return index
    raise ValueError(f"unbalanced parentheses in {text!r}")


def column_processors(
    table: Table, columns: Sequence[str], dialect: Dialect
) -> tuple[Callable[[Any], Any], ...]:
    """The full bind processor of each column (its type's, then the dialect's, as an ORM write
    applies them); the identity where a column has none. A JSON column's gives the document's
    text on PostgreSQL too (``_processor``)."""
    return tuple(_processor(table.c[c].type.dialect_impl(dialect), dialect) or _same for c in columns)


def _processor(kind: TypeEngine[Any], dialect: Dialect) -> Callable[[Any], Any] | None:
    """``kind``'s bind processor; for JSON on PostgreSQL, the generic one, which gives the document's text.

    The text is what the engine's ``json_serializer`` writes (SQL NULL and JSON ``null`` as the
    column's type decides).
    """
    # The dialect's own wraps each document for psycopg, which an array literal cannot spell: JSON
    # tables went row by row, ~200 µs of client CPU a row against a few µs (design/bulk-writes.md).
    if dialect.name == "postgresql" and isinstance(kind, JSON):
        text: Callable[[Any], Any] = JSON.bind_processor(kind, dialect)  # type: ignore[no-untyped-call]
        return text
    return kind.bind_processor(dialect)


def _same(value: Any) -> Any:
    return value
