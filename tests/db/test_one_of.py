"""``one_of``: the rows ``IN`` would find, in one statement text whatever the number of values
(on PostgreSQL, where a text that varies is parsed and planned again at every call)."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlmodel import col, select

from arena.db.engine import session_scope
from arena.db.models import AgentRow, MarketRow
from arena.db.one_of import one_of, one_of_param
from arena.engine.store.ledger_store import fill_counts
from tests.db.rows import added_decision, build_world, buy, position, statements


def test_one_of_finds_what_in_finds(engine: Engine) -> None:
    a, b = build_world(engine).agent_ids
    with session_scope(engine, write=False) as session:
        for ids in ([], [a], [b, a], [a, b + 100]):
            found = session.exec(select(AgentRow.id).where(one_of(session, col(AgentRow.id), ids))).all()
            assert sorted(found) == sorted(i for i in ids if i in (a, b))
        markets = select(MarketRow.id).where(one_of(session, col(MarketRow.id), ["polymarket:123", "x"]))
        assert session.exec(markets).all() == ["polymarket:123"]


def test_one_of_param_finds_what_in_finds(engine: Engine) -> None:
    """The same, built once with the values bound at execution (``one_of_param``)."""
    a, b = build_world(engine).agent_ids
    query = select(AgentRow.id).where(one_of_param(col(AgentRow.id), "ids", engine.dialect.name))
    with session_scope(engine, write=False) as session:
        for ids in ([], [a], [b, a], [a, b + 100]):
            found = session.exec(query, params={"ids": ids}).all()
            assert sorted(found) == sorted(i for i in ids if i in (a, b))


def test_fill_counts_send_one_text_whatever_the_agent_count(engine: Engine, backend: str) -> None:
    """The ledger check of every write unit counts the fills of 1 to all of a cohort's agents."""
    world = build_world(engine)
    a, b = world.agent_ids
    with session_scope(engine) as session:
        session.add(position(world))
        session.add(buy(world, added_decision(session, world)))
    with session_scope(engine) as session, statements(engine) as sent:
        assert fill_counts(session, [a]) == {a: 1}
        assert fill_counts(session, [a, b]) == {a: 1}
        assert fill_counts(session, [b]) == {}
    if backend != "sqlite":
        assert len(set(sent)) == 1, sent
