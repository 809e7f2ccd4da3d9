"""Idempotent writes keyed on a unique constraint, correct on SQLite and PostgreSQL alike.

A check-then-insert races with a second process (two syncs insert the same market twice);
``INSERT ... ON CONFLICT`` lets the database decide atomically. Both helpers run inside the
caller's session and never commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, func
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from arena.db.models import ArenaTable

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

    ``any_key``: skip a row that collides on any unique constraint of the table, not only ``on``.
    PostgreSQL resolves a race between two inserters only on the conflict target; a table with a
    second unique key (markets: id, and venue + venue id) needs this when two processes may store
    the same rows at once. Returns how many rows were inserted, or 0 with ``count=False`` (for
    callers that do not use the count: no RETURNING, one plain executemany). Rows are dicts of
    column values or unsaved table objects.
    """
    table = _table(model)
    params = [_params(table, row) for row in rows]
    if not params:
        return 0
    insert = _insert(session, table)
    stmt = (
        insert.on_conflict_do_nothing() if any_key else insert.on_conflict_do_nothing(index_elements=list(on))
    )
    return _run(session, stmt, params, table, count)


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
    """Insert rows, or update columns ``update`` (default: every given column not in ``on``) of the
    row already holding the same key ``on``. ``recorded_at`` is restamped on update.

    ``if_greater`` names a column that only grows: the stored row is updated only when the new
    row's value there is greater, so concurrent or out-of-order writers keep the maximum.

    Rows repeating a key within one call are collapsed, since one statement may not update a row
    twice: the last wins, or the greatest ``if_greater``. Returns how many rows were written, or 0
    with ``count=False`` (no RETURNING, as in ``insert_ignore``).
    """
    table = _table(model)
    given = [_params(table, row) for row in rows]
    if if_greater is not None:
        given.sort(key=lambda p: p[if_greater])  # stable: the greatest of a key comes last
    params = list({tuple(p.get(c) for c in on): p for p in given}.values())
    if not params:
        return 0
    stmt = _insert(session, table)
    columns = update if update is not None else [c for c in params[0] if c not in on]
    assignments: dict[str, Any] = {c: stmt.excluded[c] for c in columns}
    if "recorded_at" in table.c and "recorded_at" not in assignments:
        assignments["recorded_at"] = func.current_timestamp()
    where = None if if_greater is None else table.c[if_greater] < stmt.excluded[if_greater]
    return _run(
        session,
        stmt.on_conflict_do_update(index_elements=list(on), set_=assignments, where=where),
        params,
        table,
        count,
    )


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


def _run(session: Session, stmt: Any, params: list[dict[str, Any]], table: Table, count: bool) -> int:
    """Run ``stmt`` for every row. Counting needs RETURNING, which yields only rows written (skipped
    conflicts return none); without it the rows go to the driver's executemany."""
    if not count:
        session.execute(stmt, params)
        return 0
    result = session.exec(stmt.returning(*table.primary_key.columns), params=params)
    return len(result.all())
