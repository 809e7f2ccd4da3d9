"""Read stored rows straight into polars frames, fast enough for millions of rows.

Going through the ORM costs a Python call per value (``ExactDecimal`` builds a ``Decimal``,
``UTCDateTime`` an aware ``datetime``): about ten seconds for a million portfolio marks. Here
the database hands over each column in its raw storage form and polars converts whole columns
at once, with the same meaning the column types give them (``arena.db.types``):

- ``ExactDecimal(scale)`` is read as the integer count of ``10**-scale`` units (SQLite already
  stores that; PostgreSQL multiplies its exact NUMERIC) and becomes ``Decimal(38, scale)``;
- ``UTCDateTime`` is read as UTC text ``YYYY-MM-DD HH:MM:SS[.ffffff]`` and becomes
  ``Datetime("us", "UTC")``;
- JSON columns stay JSON text (exports keep them as written; callers parse what they need);
- every other column keeps the driver's value, with a dtype fixed from its SQL type so an
  empty result still has the right schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import polars as pl
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    Integer,
    Select,
    String,
    Text,
    cast,
    func,
    type_coerce,
)
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator

from arena.db.types import ExactDecimal, UTCDateTime

UTC_TEXT = "%Y-%m-%d %H:%M:%S%.f"


def read_frame(connection: Connection, statement: Select[*tuple[Any, ...]]) -> pl.DataFrame:
    """The rows of ``statement`` as a frame whose columns are named by the selected keys."""
    columns: Sequence[ColumnElement[Any]] = list(statement.selected_columns)
    dialect = connection.dialect.name
    raw = statement.with_only_columns(*(_raw(column, dialect).label(column.key) for column in columns))
    rows = connection.execute(raw).all()
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    return pl.DataFrame([_series(column, list(data)) for column, data in zip(columns, values, strict=True)])


def _raw(column: ColumnElement[Any], dialect: str) -> ColumnElement[Any]:
    """The column in the form ``_series`` converts: integer units, UTC text, JSON text, or as is."""
    kind = column.type
    if isinstance(kind, ExactDecimal):
        if dialect == "sqlite":
            return type_coerce(column, BigInteger)
        return cast(type_coerce(column, kind.impl) * 10**kind.scale, BigInteger)
    if isinstance(kind, UTCDateTime):
        if dialect == "sqlite":
            return type_coerce(column, String)
        return func.to_char(func.timezone("UTC", type_coerce(column, kind.impl)), "YYYY-MM-DD HH24:MI:SS.US")
    if isinstance(kind, JSON):
        return type_coerce(column, String) if dialect == "sqlite" else cast(column, Text)
    return column


def _series(column: ColumnElement[Any], data: list[Any]) -> pl.Series:
    kind, name = column.type, column.key
    if isinstance(kind, ExactDecimal):
        units = pl.Series(name, data, dtype=pl.Int64).cast(pl.Decimal(38, 0))
        return (units * Decimal(1).scaleb(-kind.scale)).cast(pl.Decimal(38, kind.scale))
    if isinstance(kind, UTCDateTime):
        text = pl.Series(name, data, dtype=pl.String)
        return text.str.to_datetime(UTC_TEXT, time_unit="us").dt.replace_time_zone("UTC")
    return pl.Series(name, data, dtype=_dtype(kind))


def _dtype(kind: Any) -> pl.DataType:
    """The polars dtype of a plain SQL type (JSON arrives as text); decorators by their impl."""
    if isinstance(kind, TypeDecorator):
        kind = kind.impl_instance
    if isinstance(kind, Boolean):
        return pl.Boolean()
    if isinstance(kind, Integer):
        return pl.Int64()
    if isinstance(kind, Float):
        return pl.Float64()
    if isinstance(kind, String | JSON):
        return pl.String()
    raise TypeError(f"no polars dtype for SQL type {kind!r} of a selected column")
