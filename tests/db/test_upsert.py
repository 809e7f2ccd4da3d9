"""Idempotent writes: the same rows written twice leave one row each, on both backends."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import Engine
from sqlmodel import col, func, select

from arena.db.engine import session_scope
from arena.db.models import MarketRow, MarketSnapshotRow
from arena.db.upsert import insert_ignore, upsert
from tests.db.rows import T0, market


def snapshot_rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "market_id": "polymarket:1",
            "source": "clob",
            "observed_at": T0 + timedelta(minutes=i),
            "prices_json": {"YES": f"0.{i + 1}"},
        }
        for i in range(n)
    ]


def count(engine: Engine, model: type[MarketRow] | type[MarketSnapshotRow]) -> int:
    with session_scope(engine, write=False) as session:
        return session.exec(select(func.count()).select_from(model)).one()


def test_insert_ignore_inserts_new_keys_only(engine: Engine) -> None:
    on = ("market_id", "source", "observed_at")
    with session_scope(engine) as session:
        assert insert_ignore(session, MarketRow, [market("polymarket:1")], on=["id"]) == 1
        assert insert_ignore(session, MarketSnapshotRow, snapshot_rows(3), on=on) == 3
    with session_scope(engine) as session:
        assert insert_ignore(session, MarketSnapshotRow, snapshot_rows(5), on=on) == 2  # 3 already there
        assert insert_ignore(session, MarketSnapshotRow, [], on=on) == 0
    assert count(engine, MarketSnapshotRow) == 5
    with session_scope(engine, write=False) as session:
        first = session.exec(select(MarketSnapshotRow).order_by(col(MarketSnapshotRow.observed_at))).first()
        assert first is not None and first.prices_json == {"YES": "0.1"} and first.recorded_at is not None


def test_upsert_updates_in_place_and_is_idempotent(engine: Engine) -> None:
    first = market("polymarket:1")
    with session_scope(engine) as session:
        assert upsert(session, MarketRow, [first, market("polymarket:2")], on=["id"]) == 2
    changed = market("polymarket:1")
    changed.question, changed.volume, changed.updated_at = (
        "Will it snow?",
        Decimal("12.5"),
        T0 + timedelta(days=1),
    )
    for _ in range(2):  # the second run changes nothing more
        with session_scope(engine) as session:
            assert (
                upsert(session, MarketRow, [changed], on=["id"], update=["question", "volume", "updated_at"])
                == 1
            )
    assert count(engine, MarketRow) == 2
    with session_scope(engine, write=False) as session:
        row = session.get(MarketRow, "polymarket:1")
        assert row is not None
        assert (row.question, row.volume, row.updated_at) == (
            "Will it snow?",
            Decimal("12.500000"),
            T0 + timedelta(days=1),
        )
        assert row.first_seen_at == T0  # not in ``update``: kept


def test_upsert_collapses_repeated_keys_last_wins(engine: Engine) -> None:
    a, b = market("polymarket:1"), market("polymarket:1")
    b.question = "second"
    with session_scope(engine) as session:
        assert upsert(session, MarketRow, [a, b], on=["id"]) == 1
    with session_scope(engine, write=False) as session:
        row = session.get(MarketRow, "polymarket:1")
        assert row is not None and row.question == "second"


def test_upsert_if_greater_keeps_the_maximum_whatever_the_order(engine: Engine) -> None:
    """Writers arriving out of order (or twice) never move an only-growing column backwards."""
    first = market("polymarket:1")
    with session_scope(engine) as session:
        upsert(session, MarketRow, [first], on=["id"])
    later, earlier, latest = (market("polymarket:1") for _ in range(3))
    for row, days, question in ((later, 2, "later"), (earlier, 1, "earlier"), (latest, 3, "latest")):
        row.updated_at, row.question = T0 + timedelta(days=days), question
    with session_scope(engine) as session:
        assert upsert(session, MarketRow, [later], on=["id"], if_greater="updated_at") == 1
        assert upsert(session, MarketRow, [earlier], on=["id"], if_greater="updated_at") == 0
        # in one call the greatest wins, not the last given
        assert upsert(session, MarketRow, [latest, earlier], on=["id"], if_greater="updated_at") == 1
    with session_scope(engine, write=False) as session:
        row = session.get(MarketRow, "polymarket:1")
        assert row is not None and (row.question, row.updated_at) == ("latest", T0 + timedelta(days=3))
