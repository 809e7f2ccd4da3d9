"""``column`` is one of some values, in a statement whose text does not depend on how many.

SQLAlchemy's ``IN`` gives every value a parameter of its own, so the statement's text changes
with the number of values. On PostgreSQL that costs twice on every call: SQLAlchemy renders each
value's parameter and cast again, and the server parses and plans the statement again, because
psycopg prepares a statement only once it has seen the same text five times (``prepare_threshold``)
and a ledger check of 1, 2, 7 or 20 agents is a different text each time. ``= ANY(array)`` binds
the values as ONE array parameter: one text, prepared once per connection, planned as the same
index scan. SQLite keeps ``IN``: it is in the process, and its driver caches statements by text.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def one_of(session: Session, column: Any, values: Collection[Any]) -> sa.ColumnElement[bool]:
    """``column IN values``, as ``column = ANY(array)`` on PostgreSQL; the array is typed as the
    column is, so it is compared as ``IN`` would compare (an empty ``values`` matches no row)."""
    among: sa.ColumnElement[bool] = (
        column == pg_any(column, values)
        if session.get_bind().dialect.name == "postgresql"
        else column.in_(list(values))
    )
    return among


def one_of_param(column: Any, name: str, dialect: str) -> sa.ColumnElement[bool]:
    """``one_of`` for a statement built once per backend (``dialect``), the values bound at each
    execution to the parameter ``name``: an expanding ``IN`` on SQLite, ``= ANY`` of one array on
    PostgreSQL. Built and keyed at every call, a small hot query costs SQLAlchemy about as much CPU
    as running it."""
    among: sa.ColumnElement[bool] = (
        column == sa.any_(sa.bindparam(name, type_=postgresql.ARRAY(column.type)))
        if dialect == "postgresql"
        else column.in_(sa.bindparam(name, expanding=True))
    )
    return among


def pg_any(column: Any, values: Collection[Any]) -> Any:
    """``ANY(array)`` of ``values`` as one parameter typed as an array of ``column``'s type."""
    return sa.any_(sa.bindparam(None, list(values), type_=postgresql.ARRAY(column.type)))
