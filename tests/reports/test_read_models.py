"""The read models: fast columnar reads agree with the ORM exactly, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import polars as pl
from sqlalchemy import Engine, select, update

from arena.db.columnar import read_frame
from arena.db.engine import session_scope
from arena.db.models import CohortRow, DecisionRow, PortfolioSnapshotRow, PositionRow
from arena.reports import catalog, log_tables
from arena.reports.series import thin_marks
from tests.dashboard.world import LIVE, REPLAY, T0


def test_columnar_reads_match_the_orm_value_for_value(world: Engine) -> None:
    columns = [PortfolioSnapshotRow.id, PortfolioSnapshotRow.marked_at, PortfolioSnapshotRow.total_value]
    query = select(*columns).where(PortfolioSnapshotRow.cohort_id == REPLAY).order_by(PortfolioSnapshotRow.id)
    with world.connect() as connection:
        fast = read_frame(connection, query)
        slow = connection.execute(query).all()
    assert fast.schema == {
        "id": pl.Int64,
        "marked_at": pl.Datetime("us", "UTC"),
        "total_value": pl.Decimal(38, 6),
    }
    assert fast.rows() == [tuple(row) for row in slow]
    position_query = select(
        PositionRow.position_id, PositionRow.last_price, PositionRow.stale, PositionRow.closed_at
    )
    with world.connect() as connection:
        positions = read_frame(
            connection, position_query.order_by(PositionRow.agent_id, PositionRow.position_id)
        )
        expected = connection.execute(
            position_query.order_by(PositionRow.agent_id, PositionRow.position_id)
        ).all()
    assert positions.schema["last_price"] == pl.Decimal(38, 10) and positions.schema["stale"] == pl.Boolean
    assert positions.rows() == [tuple(row) for row in expected]  # nulls, booleans and prices included


def test_json_columns_come_back_as_json_text(world: Engine) -> None:
    with world.connect() as connection:
        decisions = log_tables.decisions(connection, REPLAY, agent="gpt-4o")
    first = decisions.row(0, named=True)
    assert json.loads(first["actions_json"])[0] == {
        "type": "bet", "market_id": "polymarket:btc-100k", "outcome": "YES", "amount": "500",
    }  # fmt: skip
    assert json.loads(first["probabilities_json"])["polymarket:btc-100k"] == {"YES": 0.7}
    assert first["cost_usd"] == Decimal("0.0123456789")


def test_empty_results_keep_their_schema(world: Engine) -> None:
    with world.connect() as connection:
        none = log_tables.fills(connection, "no-such-cohort")
    assert (
        none.is_empty()
        and none.schema["amount"] == pl.Decimal(38, 6)
        and none.schema["filled_at"] == pl.Datetime("us", "UTC")
    )


def test_data_version_moves_with_new_rows_and_statuses_only(world: Engine) -> None:
    with world.connect() as connection:
        before = catalog.data_version(connection)
        assert catalog.data_version(connection) == before
    with session_scope(world) as session:
        session.execute(update(CohortRow).where(CohortRow.id == LIVE).values(status="paused"))
    with world.connect() as connection:
        paused = catalog.data_version(connection)
        assert paused != before and catalog.live_cohorts(catalog.cohorts(connection)) == []
    with session_scope(world) as session:
        decision = session.exec(select(DecisionRow).where(DecisionRow.cohort_id == LIVE)).first()[0]
        session.add(
            PortfolioSnapshotRow(
                agent_id=decision.agent_id,
                cohort_id=LIVE,
                marked_at=T0 + timedelta(days=40),
                cash=Decimal(1),
                positions_value=Decimal(0),
                total_value=Decimal(1),
                realized_pnl=Decimal(0),
                unrealized_pnl=Decimal(0),
            )
        )
    with world.connect() as connection:
        assert catalog.data_version(connection) != paused


def test_markets_of_a_cohort_with_latest_price_and_resolution(world: Engine) -> None:
    with world.connect() as connection:
        live = catalog.markets(connection, LIVE)
        everything = catalog.markets(connection)
        history = catalog.price_history(connection, "polymarket:fed-cut")
    assert live["market_id"].to_list() == ["manifold:rain", "polymarket:election"]
    assert len(everything) == 5
    fed = everything.filter(pl.col("market_id") == "polymarket:fed-cut").row(0, named=True)
    assert (fed["resolution"], fed["last_price"]) == ("NO", history["price"][-1])
    assert history["observed_at"][0] == T0 - timedelta(days=5) and history["observed_at"].is_sorted()


def test_thin_marks_keeps_real_first_and_last_marks_within_the_budget() -> None:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    marks = pl.DataFrame(
        {
            "agent": ["a"] * 10_000 + ["b"] * 3,
            "marked_at": [start + timedelta(minutes=i) for i in range(10_000)]
            + [start, start + timedelta(days=1), start + timedelta(days=6)],
            "total_value": list(range(10_003)),
        }
    )
    thin = thin_marks(marks, max_points=100)
    a = thin.filter(pl.col("agent") == "a")
    assert 50 <= len(a) <= 101 and a["total_value"][0] == 0 and a["total_value"][-1] == 9_999
    assert thin.filter(pl.col("agent") == "b")["total_value"].to_list() == [10_000, 10_001, 10_002]
    assert thin.join(
        marks, on=["agent", "marked_at", "total_value"], how="anti"
    ).is_empty()  # nothing invented
    assert thin_marks(marks.head(50), max_points=100).equals(marks.head(50))
