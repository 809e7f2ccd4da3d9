"""``update_by_key``: many keyed rows updated at once (one statement on PostgreSQL), exactly."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.keyed_update import array_literal, update_by_key
from arena.db.models import PositionRow
from arena.db.upsert import column_processors
from tests.db.rows import T0, build_world, position

COLUMNS = ("last_price", "last_marked_at", "stale", "updated_at")
KEYS = ("agent_id", "position_id")


def test_each_row_gets_its_own_values_and_other_rows_are_untouched(engine: Engine) -> None:
    world = build_world(engine)
    a, b = world.agent_ids
    with session_scope(engine) as session:
        session.add_all(
            [position(world, "p1", 0), position(world, "p2", 1), position(world, "p3", 0, outcome="NO")]
        )
    later = T0 + timedelta(days=1)
    marks = [
        (Decimal("0.1234567891"), later, False, later, a, "p1"),
        (None, None, True, later, b, "p2"),  # a mark cleared
    ]
    with session_scope(engine) as session:
        table = PositionRow.__table__  # type: ignore[attr-defined]
        processors = column_processors(table, (*COLUMNS, *KEYS), session.get_bind().dialect)
        bound = [tuple(f(v) for f, v in zip(processors, row, strict=True)) for row in marks]
        update_by_key(session, table, COLUMNS, KEYS, bound[:1])
        update_by_key(session, table, COLUMNS, KEYS, bound[1:])  # columns of NULLs only
    with Session(engine) as session:
        rows = {
            r.position_id: (r.last_price, r.last_marked_at, r.stale, r.updated_at)
            for r in session.exec(select(PositionRow).order_by(col(PositionRow.position_id)))
        }
    assert rows == {
        "p1": (Decimal("0.1234567891"), later, False, later),
        "p2": (None, None, True, later),
        "p3": (None, None, False, T0),
    }


def test_no_rows_is_no_statement(engine: Engine) -> None:
    with session_scope(engine) as session:
        update_by_key(session, PositionRow.__table__, COLUMNS, KEYS, [])  # type: ignore[attr-defined]


def test_keys_with_quotes_backslashes_and_braces_find_their_rows(engine: Engine) -> None:
    """Array elements are sent as text on PostgreSQL: no key can break out of its element."""
    world = build_world(engine)
    odd = ['p"1', "p\\2", "p,{3}", "NULL", " p 5 "]
    with session_scope(engine) as session:
        session.add_all([position(world, pid, i % 2, outcome=f"O{i}") for i, pid in enumerate(odd)])
    later = T0 + timedelta(days=2)
    with session_scope(engine) as session:
        table = PositionRow.__table__  # type: ignore[attr-defined]
        processors = column_processors(table, (*COLUMNS, *KEYS), session.get_bind().dialect)
        rows = [
            (Decimal(i) / 10, later, True, later, world.agent_ids[i % 2], pid) for i, pid in enumerate(odd)
        ]
        update_by_key(
            session,
            table,
            COLUMNS,
            KEYS,
            [tuple(f(v) for f, v in zip(processors, r, strict=True)) for r in rows],
        )
    with Session(engine) as session:
        stored = {r.position_id: r.last_price for r in session.exec(select(PositionRow))}
    assert stored == {pid: Decimal(i) / 10 for i, pid in enumerate(odd)}


def test_array_literal_quotes_every_element_but_null() -> None:
    assert array_literal([None, True, False, 3, Decimal("0.5300"), 'a"b\\c']) == (
        '{NULL,t,f,"3","0.5300","a\\"b\\\\c"}'
    )
    with pytest.raises(TypeError, match="bytes"):
        array_literal([b"x"])


def test_array_literal_spells_every_float_as_python_writes_it() -> None:
    """Floats are not merged by equality: ``-0.0 == 0.0``, yet the column keeps the sign."""
    assert array_literal([0.1, -0.0, 0.0, 1e-300, float("inf"), None]) == (
        '{"0.1","-0.0","0.0","1e-300","inf",NULL}'
    )


def test_array_literal_of_plain_columns_matches_the_general_form() -> None:
    values = [1, Decimal("0.5"), "p1", T0]
    assert array_literal(values) == '{"1","0.5","p1","2025-03-01 12:00:00+00:00"}'
    assert array_literal([]) == "{}"
    assert array_literal(["a,b", "c}"]) == '{"a,b","c}"}'
