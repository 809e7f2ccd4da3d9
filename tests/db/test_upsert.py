"""Idempotent writes: the same rows written twice leave one row each, on both backends."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import Engine
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import col, func, select

from arena.db.engine import session_scope
from arena.db.models import DecisionRow, FillRow, MarketRow, MarketSnapshotRow, PortfolioCloseRow, PositionRow
from arena.db.upsert import driver_form, insert_ignore, unnest_insert, upsert, with_python_defaults
from arena.engine.store.ledger_store import write_positions
from tests.db.rows import T0, build_world, market, position, statements


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


def _stored(engine: Engine) -> list[tuple[object, ...]]:
    """The snapshot rows exactly as the database holds them (times as text, JSON as text)."""
    return _rows(
        engine,
        "SELECT market_id, source, CAST(observed_at AS TEXT), CAST(prices_json AS TEXT), "
        "CAST(bids_json AS TEXT) FROM market_snapshot ORDER BY observed_at",
    )


def test_uncounted_writes_store_what_counted_writes_store(engine: Engine) -> None:
    """``count=False`` binds the rows itself and hands them to the driver's executemany; what
    lands in the database must be what SQLAlchemy's own path stores, byte for byte, and rows it
    cannot bind itself (a column left to its Python default) still get that default."""
    on = ("market_id", "source", "observed_at")
    full = [r | {"bids_json": {"YES": "0.05"}, "asks_json": {}, "raw_json": None} for r in snapshot_rows(3)]
    table = MarketSnapshotRow.__table__  # type: ignore[attr-defined]
    keys = tuple(full[0])
    assert driver_form(engine.dialect, lambda: sqlite.insert(table), table, keys, ("test",)) is not None
    with session_scope(engine) as session:
        insert_ignore(session, MarketRow, [market("polymarket:1")], on=["id"])
        assert insert_ignore(session, MarketSnapshotRow, full, on=on) == 3
    counted = _stored(engine)
    with engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM market_snapshot")
    with session_scope(engine) as session:
        assert insert_ignore(session, MarketSnapshotRow, full, on=on, count=False) == 0
        assert upsert(session, MarketSnapshotRow, full, on=on, count=False) == 0
    assert _stored(engine) == counted
    uneven = snapshot_rows(5)[3:]
    del uneven[0]["prices_json"]  # a column left to its Python default: SQLAlchemy's path
    with session_scope(engine) as session:
        insert_ignore(session, MarketSnapshotRow, uneven, on=on, count=False)
    assert count(engine, MarketSnapshotRow) == 5
    assert _stored(engine)[3][3] in ("{}", b"{}")


def test_rows_sent_as_arrays_store_what_the_ordinary_path_stores(engine: Engine) -> None:
    """On PostgreSQL ``count=False`` rows of plain columns go as one array per column in one
    statement (``unnest_insert``): odd text cannot break out of its element, NULLs stay NULL,
    decimals keep their places, a key repeated within one call is skipped as a conflict, and the
    rows stored are those SQLAlchemy's own path stores."""
    world = build_world(engine)
    odd = ['p"1', "p\\2", "p,{3}", "NULL", " p 5 ", ""]
    rows = [
        position(world, pid, i % 2, outcome=f"O{i}", last_price=None if i % 3 else Decimal("0.1234567891"))
        for i, pid in enumerate(odd)
    ]
    on = ["agent_id", "position_id"]
    with session_scope(engine) as session:
        assert insert_ignore(session, PositionRow, rows, on=on) == len(odd)
    counted = _positions(engine)
    with engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM position")
    with statements(engine) as sent, session_scope(engine) as session:
        insert_ignore(session, PositionRow, [*rows, rows[0]], on=on, count=False)
        insert_ignore(session, PositionRow, rows[:2], on=on, count=False)
    assert _positions(engine) == counted
    inserts = [s for s in sent if s.startswith("INSERT")]
    assert len(inserts) == 2
    assert all(("unnest(" in s) == (engine.dialect.name == "postgresql") for s in inserts)
    assert {r[1] for r in counted} == set(odd)
    assert sum(r[6] is None for r in counted) == 4


def test_json_documents_sent_as_arrays_store_what_the_ordinary_path_stores(engine: Engine) -> None:
    """JSON columns go in the arrays too (their documents as text): quotes, backslashes, braces
    and non-ASCII text survive their element, JSON ``null`` stays JSON ``null`` and SQL NULL stays
    SQL NULL, as SQLAlchemy's own path stores them."""
    on = ("market_id", "source", "observed_at")
    odd = ['{"a": 1}', 'b\\"c', "{x,y}", "NULL", "é ✓", ""]
    full = [
        r | {"bids_json": {text: text}, "asks_json": [text, None], "raw_json": None if i % 2 else {"n": i}}
        for i, (r, text) in enumerate(zip(snapshot_rows(len(odd)), odd, strict=True))
    ]
    stored = (
        "SELECT CAST(bids_json AS TEXT), CAST(asks_json AS TEXT), CAST(raw_json AS TEXT), "
        "raw_json IS NULL FROM market_snapshot ORDER BY observed_at"
    )
    with session_scope(engine) as session:
        insert_ignore(session, MarketRow, [market("polymarket:1")], on=["id"])
        assert insert_ignore(session, MarketSnapshotRow, full, on=on) == len(odd)
    counted = _rows(engine, stored)
    with engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM market_snapshot")
    with statements(engine) as sent, session_scope(engine) as session:
        insert_ignore(session, MarketSnapshotRow, full, on=on, count=False)
    assert _rows(engine, stored) == counted
    assert [r[3] for r in counted] == [False] * len(odd)  # None in a JSON column is JSON null
    assert [("unnest(" in s) for s in sent if s.startswith("INSERT")] == [engine.dialect.name == "postgresql"]


def test_rows_leaving_columns_to_python_defaults_store_what_the_ordinary_path_stores(engine: Engine) -> None:
    """New decisions give a few columns and leave the rest to the model's defaults (scalars and
    default factories): ``count=False`` fills those in itself and sends the rows on the driver's
    path (arrays on PostgreSQL, floats included), storing what SQLAlchemy's own path stores."""
    world = build_world(engine)
    given = {
        "round_id": world.round_id,
        "cohort_id": world.cohort_id,
        "claim_token": "t",
        "status": "claimed",
    }
    rows = [
        given | {"claimed_at": T0, "agent_id": a, "latency_s": s}
        for a, s in zip(world.agent_ids, (-0.0, 1 / 3), strict=True)
    ]
    stored = (
        "SELECT agent_id, CAST(actions_json AS TEXT), CAST(probabilities_json AS TEXT), reasoning, attempts, "
        "CAST(cost_usd AS TEXT), CAST(latency_s AS TEXT), decided_at FROM decision ORDER BY agent_id"
    )
    written = []
    for count in (True, False):
        with statements(engine) as sent, session_scope(engine) as session:
            insert_ignore(session, DecisionRow, rows, on=["round_id", "agent_id"], count=count)
        written.append(_rows(engine, stored))
        with engine.begin() as connection:
            connection.exec_driver_sql("DELETE FROM decision")
    assert written[0] == written[1]
    assert [r[1:5] for r in written[0]] == [("[]", "{}", "", 0)] * 2
    assert ("unnest(" in sent[-1]) == (engine.dialect.name == "postgresql")
    filled = with_python_defaults(DecisionRow.__table__, rows)  # type: ignore[attr-defined]
    assert filled[0]["actions_json"] is not filled[1]["actions_json"]  # a factory's value for each row


def test_write_positions_keeps_the_last_row_of_a_position_given_twice(engine: Engine) -> None:
    """Row-by-row upserts let a later row of the same position win; the one-statement path on
    PostgreSQL may not update a row twice, so ``write_positions`` keeps the last row itself."""
    world = build_world(engine)
    first, second, other = (
        row.model_dump(exclude={"recorded_at"})  # stamped by the database, as position_row leaves it
        for row in (
            position(world, "p1", last_price=Decimal("0.40")),
            position(world, "p1", last_price=Decimal("0.45")),
            position(world, "p2", outcome="NO"),
        )
    )
    with session_scope(engine) as session:
        write_positions(session, [first, other])
    with session_scope(engine) as session:
        write_positions(session, [first, other, second])  # p1 now exists and is given twice
    with session_scope(engine, write=False) as session:
        prices = {r.position_id: r.last_price for r in session.exec(select(PositionRow))}
    assert prices == {"p1": Decimal("0.45"), "p2": None}


def test_the_array_statement_keeps_the_conflict_clause() -> None:
    dialect = postgresql.psycopg.dialect()  # type: ignore[attr-defined]
    table = PortfolioCloseRow.__table__  # type: ignore[attr-defined]
    keys = ("agent_id", "cohort_id", "day", "closed_at")
    form = driver_form(
        dialect, lambda: postgresql.insert(table).on_conflict_do_nothing(), table, keys, ("arrays",)
    )
    assert form is not None
    sql = unnest_insert(dialect, table, form[0], form[1])
    assert sql == (
        "INSERT INTO portfolio_close (agent_id, day, cohort_id, closed_at) SELECT * FROM unnest("
        "%s::INTEGER[], %s::DATE[], %s::VARCHAR[], %s::TIMESTAMP WITH TIME ZONE[]) ON CONFLICT DO NOTHING"
    )


def _positions(engine: Engine) -> list[tuple[object, ...]]:
    return _rows(
        engine,
        "SELECT agent_id, position_id, market_id, outcome, CAST(shares AS TEXT), "
        "CAST(cost_basis AS TEXT), CAST(last_price AS TEXT), status "
        "FROM position ORDER BY agent_id, position_id",
    )


def _rows(engine: Engine, sql: str) -> list[tuple[object, ...]]:
    with engine.connect() as connection:
        return [tuple(r) for r in connection.exec_driver_sql(sql)]


def test_uncounted_inserts_return_nothing() -> None:
    """A table with a generated key: the rows' INSERT does not ask for the keys back."""
    table = FillRow.__table__  # type: ignore[attr-defined]
    keys = tuple(c.name for c in table.c if c.name not in ("id", "recorded_at"))
    for dialect in (postgresql.psycopg.dialect(), sqlite.pysqlite.dialect()):  # type: ignore[attr-defined]
        form = driver_form(dialect, table.insert, table, keys, ("returning",))
        assert form is not None and "RETURNING" not in form[0]
