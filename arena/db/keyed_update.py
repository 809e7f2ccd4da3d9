"""Updating many rows, each found by its key, in as few statements as the backend allows.

A replay re-marks every open position of every agent each simulated day: hundreds of rows per
write, a hundred thousand over a year. On SQLite the driver's executemany is already cheap (the
database is in the process). On PostgreSQL every row of an executemany is a statement of its
own for the server (bound, executed and reported one by one, even when pipelined), so the rows
go instead as one array per column in ONE statement, ``UPDATE .. FROM unnest(..)``: one plan,
one round trip, and less than half the server's CPU per row. Each array is sent as the text of
an array literal (``{"0.53",NULL}``) written here: the driver's own adapter for Python lists
works element by element in Python and cost twice as much client CPU as the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from sqlalchemy import Dialect, Table
from sqlmodel import Session

from arena.db.pipeline import send, unit_connection


def update_by_key(
    session: Session,
    table: Table,
    columns: Sequence[str],
    keys: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    count: bool = True,
) -> int:
    """``UPDATE table SET columns WHERE keys`` for every row of ``rows``: each row gives the new
    values of ``columns`` then the values of ``keys``, already in the driver's form (the columns'
    bind processors applied, see ``upsert.column_processors``). A key names at most one row in
    the table, and appears at most once in ``rows`` (one statement may not update a row twice).
    A column may be both set and matched (a status moving on from the one expected). Returns
    how many rows were updated, or 0 with ``count=False``: on PostgreSQL the update then goes in
    the unit's pipeline, and the unit waits for it with its next statement or its commit
    (``pipeline.send``)."""
    if not rows:
        return 0
    dialect = session.get_bind().dialect
    sql = _update_sql(dialect, table, tuple(columns), tuple(keys))
    connection = unit_connection(session)
    if dialect.name == "postgresql":
        params: Any = tuple(array_literal(values) for values in zip(*rows, strict=True))
    else:
        params = [tuple(row) for row in rows]
    if not count:
        send(connection, sql, params, many=dialect.name != "postgresql")
        return 0
    return connection.exec_driver_sql(sql, params).rowcount


def _update_sql(dialect: Dialect, table: Table, columns: tuple[str, ...], keys: tuple[str, ...]) -> str:
    """The statement of ``update_by_key``, built once per shape and dialect."""
    shape = (dialect.name, dialect.paramstyle, table.name, columns, keys)
    if shape not in _STATEMENTS:
        _STATEMENTS[shape] = _build(dialect, table, columns, keys)
    return _STATEMENTS[shape]


_STATEMENTS: dict[tuple[object, ...], str] = {}


def _build(dialect: Dialect, table: Table, columns: tuple[str, ...], keys: tuple[str, ...]) -> str:
    """On PostgreSQL one UPDATE joined to the rows unnested from one array parameter per column
    (typed as the column is); on SQLite a plain keyed UPDATE for executemany."""
    name = dialect.identifier_preparer.quote(table.name)
    quote = dialect.identifier_preparer.quote
    if dialect.name == "postgresql":
        # the arrays' columns are named by position: a column set and matched comes twice
        names = [*columns, *keys]
        arrays = ", ".join(f"%s::{table.c[c].type.compile(dialect=dialect)}[]" for c in names)
        given = ", ".join(f"v{i}" for i in range(len(names)))
        assignments = ", ".join(f"{quote(c)} = v.v{i}" for i, c in enumerate(columns))
        match = " AND ".join(f"t.{quote(k)} = v.v{i}" for i, k in enumerate(keys, len(columns)))
        # Names from the schema's metadata, quoted by the dialect; every value is a parameter.
        return f"UPDATE {name} AS t SET {assignments} FROM unnest({arrays}) AS v({given}) WHERE {match}"  # noqa: S608
    if dialect.name != "sqlite":
        raise ValueError(
            f"update_by_key has no statement for {dialect.name}: the arena runs on SQLite and PostgreSQL"
        )
    assignments = ", ".join(f"{quote(c)} = ?" for c in columns)
    match = " AND ".join(f"{quote(k)} = ?" for k in keys)
    return f"UPDATE {name} SET {assignments} WHERE {match}"  # noqa: S608


def array_literal(values: Iterable[Any]) -> str:
    """PostgreSQL's text form of a one-dimensional array of ``values`` (each ``None``, a ``bool``, or
    an ``int``, ``float``, ``Decimal``, ``str``, ``date`` or ``datetime``, whose ``str`` the
    column's input function reads back exactly); every element but NULL is quoted, so no value
    can end or nest the array. Each distinct value is spelled once: a day's marks repeat a few
    instants and prices over hundreds of rows. Values of one column are of one type, so values
    equal in Python (``Decimal("0.50")`` and ``Decimal("0.5")``) are equal in the column too,
    except floats' ``0.0`` and ``-0.0``: floats are spelled one by one."""
    given = list(values)
    if isinstance(next((value for value in given if value is not None), None), float):
        return "{" + ",".join(map(_element, given)) + "}"
    texts = {value: _element(value) for value in set(given)}
    return "{" + ",".join(map(texts.__getitem__, given)) + "}"


def fits_array_literal(values: Iterable[Any]) -> bool:
    """Whether ``array_literal`` can spell ``values``, the values of one column (not, e.g., JSON
    documents wrapped for psycopg): those are of one type, so the first that is not None answers
    for all."""
    first = next((value for value in values if value is not None), None)
    return first is None or isinstance(first, _SPELLED)


_SPELLED = (bool, int, float, Decimal, str, date)


def _element(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "t" if value else "f"
    if not isinstance(value, _SPELLED):
        raise TypeError(f"no array text form for {type(value).__name__}")
    text = str(value)
    if "\\" in text or '"' in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'
