"""A PostgreSQL write unit sends its unread writes with its next statement or its COMMIT (one
psycopg pipeline, one wait), and still raises a failed write's error inside the unit, which then
stores nothing; SQLite runs every statement at once, as before."""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, bindparam
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import Session, col, select

from arena.db.engine import make_engine, relaxed_commits, session_scope
from arena.db.keyed_update import update_by_key
from arena.db.models import PositionRow
from arena.db.pipeline import read_after_sent, read_later
from arena.db.upsert import column_processors, insert_ignore
from arena.engine.store.ledger_store import AgentBook, stale_books
from arena.workers.queue import fenced_session_url
from portfolio import AgentId, Ledger, Rules
from tests.db.rows import T0, World, build_world, market, position
from tests.db.waits import waits

MARKS = ("last_price", "last_marked_at", "stale", "updated_at")
KEYS = ("agent_id", "position_id")


def _book(world: World) -> AgentBook:
    agent = world.agent_ids[0]
    return AgentBook(agent, Ledger.from_fills(Rules(), [], agent_id=AgentId(str(agent))), 0)


def _marks(session: Session, world: World) -> list[tuple[Any, ...]]:
    table = PositionRow.__table__  # type: ignore[attr-defined]
    processors = column_processors(table, (*MARKS, *KEYS), session.get_bind().dialect)
    later = T0 + timedelta(days=1)
    row = (None, None, True, later, world.agent_ids[0], "p1")
    return [tuple(f(v) for f, v in zip(processors, row, strict=True))]


def _mark_flush(session: Session, world: World, rows: list[PositionRow]) -> dict[int, str]:
    """The shape of a replay's flush of marks: a write, the ledger fence, a keyed update."""
    insert_ignore(session, PositionRow, rows, on=["agent_id", "position_id"], count=False)
    stale = stale_books(session, [_book(world)])
    table = PositionRow.__table__  # type: ignore[attr-defined]
    update_by_key(session, table, MARKS, KEYS, _marks(session, world), count=False)
    return stale


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite is in the process: no round trips
@pytest.mark.parametrize("relaxed", [False, True], ids=["durable", "relaxed"])
def test_a_flush_of_marks_waits_for_postgresql_twice(engine: Engine, tmp_path: Path, relaxed: bool) -> None:
    world = build_world(engine)
    units = relaxed_commits(engine) if relaxed else engine
    with waits(tmp_path / "trace") as (watch, found), session_scope(units) as session:
        watch(session)
        assert _mark_flush(session, world, [position(world)]) == {}
    # psycopg's BEGIN (in a pipeline, it waits for it), then the INSERT, the lock and the count,
    # then the UPDATE and the COMMIT; before: BEGIN, each statement, COMMIT. Relaxed, the unit's
    # BEGIN and its SET LOCAL go when it takes its connection, before ``watch`` traces it.
    assert found == (["Sync"] * 2 if relaxed else ["Sync"] * 3)
    with Session(engine) as session:
        stored = session.exec(select(PositionRow.position_id, PositionRow.stale)).all()
    assert stored == [("p1", True)]


@pytest.mark.parametrize("backend", ["postgres-plain"], indirect=True)  # ARENA_PG_PIPELINE=off
def test_without_the_pipeline_the_same_flush_waits_for_each_statement(engine: Engine, tmp_path: Path) -> None:
    world = build_world(engine)
    with waits(tmp_path / "trace") as (watch, found), session_scope(engine) as session:
        watch(session)
        assert _mark_flush(session, world, [position(world)]) == {}
    # BEGIN, the INSERT, the lock, the count, the UPDATE, COMMIT: a wait each (pipelined: three).
    assert found == ["Query", *["Sync"] * 4, "Query"]
    with Session(engine) as session:
        stored = session.exec(select(PositionRow.position_id, PositionRow.stale)).all()
    assert stored == [("p1", True)]


# A read built once, as ``read_later`` takes it: the positions of one agent.
_POSITIONS = (
    select(col(PositionRow.position_id), col(PositionRow.outcome))
    .where(col(PositionRow.agent_id) == bindparam("agent_id"))
    .order_by(col(PositionRow.position_id))
)


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite runs it at once: no round trips
@pytest.mark.parametrize("ahead", [True, False], ids=["answered-with-the-fence", "answered-alone"])
def test_a_read_sent_ahead_is_answered_with_the_units_next_read(
    engine: Engine, tmp_path: Path, ahead: bool
) -> None:
    """``read_later`` sends its read with what the unit sent before it, whose rows it sees; its
    answer comes with the next read's (the ledger fence here), in one wait, or, read before any
    other, in a wait of its own."""
    world = build_world(engine)
    with waits(tmp_path / "trace") as (watch, found), session_scope(engine) as session:
        watch(session)
        insert_ignore(session, PositionRow, [position(world)], on=["agent_id", "position_id"], count=False)
        rows = read_later(session, _POSITIONS, {"agent_id": world.agent_ids[0]})
        if ahead:
            assert stale_books(session, [_book(world)]) == {}
        assert rows() == [("p1", "YES")]
        assert rows() == [("p1", "YES")]  # read once, given again
        if not ahead:
            assert stale_books(session, [_book(world)]) == {}
    # psycopg's BEGIN; the INSERT, the read (and the fence's lock and count, when ahead); the
    # COMMIT, on its own; answered alone, the fence waits once more
    assert found == ["Sync", "Sync", *([] if ahead else ["Sync"]), "Query"]


# A numeric column: PostgreSQL's result processor for it needs the column's type code.
_SHARES = select(col(PositionRow.position_id), col(PositionRow.shares)).where(
    col(PositionRow.agent_id) == bindparam("agent_id")
)


def _numeric_reads(engine: Engine, units: Engine) -> None:
    world = build_world(engine)
    with session_scope(units) as session:
        insert_ignore(session, PositionRow, [position(world)], on=list(KEYS), count=False)
        later = read_later(session, _SHARES, {"agent_id": world.agent_ids[0]})
        (sent,) = read_after_sent(session, [(_SHARES, {"agent_id": world.agent_ids[0]})])
        assert later() == sent == [("p1", Decimal("1250"))]


def test_reads_sent_with_the_unit_give_values_as_sqlalchemy_does(engine: Engine) -> None:
    """``read_later`` and ``read_after_sent`` give each value through its column's result
    processor, a numeric column's too (on PostgreSQL it needs the type code the driver reports)."""
    _numeric_reads(engine, engine)


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # a PostgreSQL session setting
def test_reads_of_a_unit_that_sends_each_statement_alone_give_the_same_values(engine: Engine) -> None:
    """The same on a worker's connection (``fenced_session_url``), which never pipelines."""
    fenced = make_engine(fenced_session_url(engine.url, timedelta(minutes=1)))
    try:
        _numeric_reads(engine, fenced)
    finally:
        fenced.dispose()


def _flush_with(engine: Engine, world: World, rows: list[PositionRow]) -> None:
    with session_scope(engine) as session:
        _mark_flush(session, world, rows)


def _write_then_read(engine: Engine, rows: list[PositionRow]) -> None:
    with session_scope(engine) as session:
        insert_ignore(session, PositionRow, rows, on=["agent_id", "position_id"], count=False)
        session.exec(select(PositionRow)).all()


def test_a_failed_write_raises_in_its_unit_which_stores_nothing(engine: Engine) -> None:
    world = build_world(engine)
    negative = position(world, "p2", shares=-1)  # refused by a check constraint
    with pytest.raises(IntegrityError, match="ck_position_shares_not_negative") as raised:
        _flush_with(engine, world, [position(world), negative])
    assert str(raised.value.statement).startswith("INSERT INTO position")
    with Session(engine) as session:
        assert session.exec(select(PositionRow)).all() == []
    _flush_with(engine, world, [position(world)])  # the pooled connection serves the next unit
    with Session(engine) as session:
        assert session.exec(select(col(PositionRow.position_id))).all() == ["p1"]


def test_a_failed_write_raises_before_the_units_next_read(engine: Engine) -> None:
    world = build_world(engine)
    with pytest.raises(IntegrityError, match="ck_position_shares_not_negative") as raised:
        _write_then_read(engine, [position(world, shares=-1)])
    assert str(raised.value.statement).startswith("INSERT INTO position")


def test_a_write_refused_by_a_foreign_key_raises_in_its_unit_which_stores_nothing(
    engine: Engine, backend: str
) -> None:
    """The arena's foreign keys are deferred: SQLite, and PostgreSQL sending statements one by
    one, check them at COMMIT. A PostgreSQL unit that pipelines checks them as each statement
    ends, so its error names the INSERT; it still comes inside the unit, and the unit stores
    nothing."""
    world = build_world(engine)
    orphan = position(world, "p2", market_id="polymarket:none")
    with pytest.raises(IntegrityError, match=r"FOREIGN KEY|fk_position_market_id_market") as raised:
        _flush_with(engine, world, [position(world), orphan])
    if backend == "postgres":
        assert str(raised.value.statement).startswith("INSERT INTO position")
    else:  # raised by the commit, outside any statement
        assert raised.value.statement is None
    with Session(engine) as session:
        assert session.exec(select(PositionRow)).all() == []


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite sends nothing ahead
def test_every_pipelined_unit_checks_its_foreign_keys_as_it_writes(engine: Engine) -> None:
    """``SET CONSTRAINTS`` lasts one transaction: the next one on the same connection, after a
    commit, a failed commit (which leaves the connection usable) or a rollback, asks again. A
    transaction that begins with an ORM flush keeps the deferred keys, pipelined writes after it
    included, so its flush may still insert a child before its parent; so does a relaxed one,
    whose ``SET LOCAL`` goes first."""
    world = build_world(engine)
    orphan = position(world, "p2", market_id="polymarket:none")
    with engine.connect() as connection, Session(connection) as session:
        insert_ignore(session, PositionRow, [position(world)], on=list(KEYS), count=False)
        session.commit()
        for gave_up in (False, False, True):  # after a commit, after a failed one, after a rollback
            if gave_up:
                insert_ignore(session, PositionRow, [position(world, "p4")], on=list(KEYS), count=False)
                session.rollback()
            insert_ignore(session, PositionRow, [orphan], on=list(KEYS), count=False)
            with pytest.raises(IntegrityError) as raised:
                session.commit()
            assert str(raised.value.statement).startswith("INSERT INTO position")
            session.rollback()
    # the market comes after its positions; a relaxed unit's SET LOCAL, sent first, decides nothing
    for units, name in ((engine, "polymarket:later"), (relaxed_commits(engine), "polymarket:relaxed")):
        with session_scope(units) as session:
            session.add(position(world, f"{name}-a", market_id=name))
            session.flush()
            later = position(world, f"{name}-b", agent=1, market_id=name)
            insert_ignore(session, PositionRow, [later], on=list(KEYS), count=False)
            session.add(market(name))
    with Session(engine) as session:
        assert len(session.exec(select(col(PositionRow.position_id))).all()) == 5


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # the server's idle timeout
def test_a_unit_stopped_after_a_write_on_a_fenced_session_is_ended_by_the_server(engine: Engine) -> None:
    """A worker's connections (``fenced_session_url``) count on the server ending a session left
    idle in a transaction, which frees its locks for the worker that takes its unit over. A write
    left in an unsynced pipeline would keep the session from counting as idle, so such a
    connection sends each statement on its own: stopped after a write, its session is ended."""
    world = build_world(engine)
    with session_scope(engine) as session:
        insert_ignore(session, PositionRow, [position(world)], on=["agent_id", "position_id"], count=False)
    table = PositionRow.__table__  # type: ignore[attr-defined]
    fenced = make_engine(fenced_session_url(engine.url, timedelta(milliseconds=300)))
    try:
        with Session(fenced) as session:
            update_by_key(session, table, MARKS, KEYS, _marks(session, world), count=False)
            time.sleep(1.5)  # the worker stopped (SIGSTOP, a debugger, a swapped-out machine)
            with pytest.raises(DBAPIError, match="idle-in-transaction timeout"):
                session.exec(select(PositionRow)).all()
            session.rollback()  # what session_scope does with a unit that raised
    finally:
        fenced.dispose()
    with Session(engine) as session:  # its re-mark (stale) went with the ended session
        assert session.exec(select(PositionRow.position_id, PositionRow.stale)).all() == [("p1", False)]
