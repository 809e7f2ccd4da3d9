"""Money, prices, times and JSON come back exactly as they went in, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine
from sqlalchemy.exc import StatementError
from sqlmodel import Session, col, func, select

from arena.db.engine import session_scope
from arena.db.models import JobRunRow, MarketRow, MarketSnapshotRow, PortfolioSnapshotRow
from arena.db.types import PRICE_SCALE, decimals_from_json, decimals_to_json, storable_text
from markets.types import PRICE_PLACES
from tests.db.rows import T0, build_world, market

MONEY = [
    Decimal("0.000001"),
    Decimal("-0.000001"),
    Decimal("0.1"),
    Decimal("1234567.891011"),
    Decimal("999999999999.999999"),  # the largest money value (18 digits)
    Decimal("-999999999999.999999"),
    Decimal("10000"),
]


def snapshot(world_agent: int, cohort_id: str, marked_at: datetime, cash: Decimal) -> PortfolioSnapshotRow:
    return PortfolioSnapshotRow(
        agent_id=world_agent,
        cohort_id=cohort_id,
        marked_at=marked_at,
        cash=cash,
        positions_value=Decimal("0.333333"),
        total_value=cash,
        realized_pnl=Decimal(0),
        unrealized_pnl=Decimal("-0.000001"),
    )


def test_money_round_trips_exactly_and_sums_exactly(engine: Engine) -> None:
    world = build_world(engine)
    agent = world.agent_ids[0]
    with session_scope(engine) as session:
        for i, cash in enumerate(MONEY):
            session.add(snapshot(agent, world.cohort_id, T0 + timedelta(hours=i), cash))
    with session_scope(engine, write=False) as session:
        rows = session.exec(
            select(col(PortfolioSnapshotRow.cash)).order_by(col(PortfolioSnapshotRow.marked_at))
        ).all()
        assert list(rows) == MONEY
        assert all(cash.as_tuple().exponent == -6 for cash in rows)
        total = session.exec(select(func.sum(col(PortfolioSnapshotRow.cash)))).one()
        assert total == sum(MONEY) and isinstance(total, Decimal)
        above = session.exec(
            select(func.count()).where(col(PortfolioSnapshotRow.cash) > Decimal("0.1"))
        ).one()
        assert above == 3  # 1234567.891011, 999999999999.999999, 10000: SQL compares exactly


def test_price_columns_hold_every_price_a_market_source_may_give() -> None:
    """Sources promise at most ``PRICE_PLACES`` places; fills and marks store prices at this scale."""
    assert PRICE_SCALE == PRICE_PLACES


def test_prices_keep_ten_places(engine: Engine) -> None:
    world = build_world(engine)
    price = Decimal("0.1234567891")
    with session_scope(engine) as session:
        row = session.get(MarketRow, world.market_id)
        assert row is not None
        row.volume = Decimal("123456789.123456")
        session.add(
            MarketSnapshotRow(
                market_id=world.market_id,
                source="test",
                observed_at=T0,
                prices_json=decimals_to_json({"YES": price, "NO": 1 - price}),
            )
        )
    with session_scope(engine, write=False) as session:
        snap = session.exec(select(MarketSnapshotRow)).one()
        prices = decimals_from_json(snap.prices_json, field="prices_json")
        assert prices == {"YES": price, "NO": Decimal("0.8765432109")}
        stored = session.get(MarketRow, world.market_id)
        assert stored is not None and stored.volume == Decimal("123456789.123456")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (Decimal("0.0000001"), "more than 6 decimal places"),
        (Decimal("1000000000000"), "out of range"),
        (0.1, "floats are inexact"),
        (Decimal("NaN"), "finite"),
        ("12", "expected a Decimal"),
    ],
)
def test_inexact_money_is_refused_not_rounded(engine: Engine, value: object, message: str) -> None:
    world = build_world(engine)
    with Session(engine) as session:
        session.add(snapshot(world.agent_ids[0], world.cohort_id, T0, value))  # type: ignore[arg-type]
        with pytest.raises(StatementError, match=message):
            session.flush()


def test_datetimes_are_stored_utc_and_read_back_aware(engine: Engine) -> None:
    plus_five = timezone(timedelta(hours=5))
    started = datetime(2025, 6, 1, 17, 30, 0, 123456, tzinfo=plus_five)
    with session_scope(engine) as session:
        session.add(JobRunRow(job="sync", started_at=started, finished_at=started + timedelta(seconds=2)))
    with session_scope(engine, write=False) as session:
        run = session.exec(select(JobRunRow)).one()
        assert run.started_at == started
        assert run.started_at.tzinfo is UTC and run.started_at.hour == 12
        assert run.recorded_at.tzinfo is UTC
        # A comparison in SQL with an aware bound value in another zone is a comparison of instants.
        earlier = datetime(2025, 6, 1, 12, 30, 0, 123455, tzinfo=UTC)
        found = session.exec(select(JobRunRow.id).where(col(JobRunRow.started_at) > earlier)).all()
        assert len(found) == 1


def test_naive_datetime_is_refused(engine: Engine) -> None:
    with Session(engine) as session:
        session.add(JobRunRow(job="sync", started_at=datetime(2025, 1, 1)))
        with pytest.raises(StatementError, match="naive datetime"):
            session.flush()


def test_recorded_at_is_stamped_by_the_database(engine: Engine) -> None:
    with session_scope(engine) as session:
        session.add(market("manifold:abc"))
    with session_scope(engine, write=False) as session:
        row = session.get(MarketRow, "manifold:abc")
        assert row is not None
        assert row.recorded_at.tzinfo is UTC and row.recorded_at > T0


def test_json_round_trips(engine: Engine) -> None:
    raw = {"question": "Ünïcode — “quotes” 🎲", "nested": {"list": [1, 2.5, None, True]}, "empty": {}}
    with session_scope(engine) as session:
        session.add(JobRunRow(job="sync", started_at=T0, details_json=raw))
        session.add(JobRunRow(job="mark", started_at=T0, details_json=None))
    with session_scope(engine, write=False) as session:
        runs = {r.job: r for r in session.exec(select(JobRunRow))}
        assert runs["sync"].details_json == raw
        assert runs["mark"].details_json is None


def test_decimal_inside_json_is_refused_with_a_hint(engine: Engine) -> None:
    with Session(engine) as session:
        session.add(JobRunRow(job="sync", started_at=T0, details_json={"price": Decimal("0.5")}))
        # SQLAlchemy wraps the error on SQLite; psycopg serializes JSON itself and raises it as is.
        with pytest.raises((StatementError, TypeError), match="decimals_to_json"):
            session.flush()


def test_decimals_from_json_names_the_bad_field() -> None:
    with pytest.raises(ValueError, match=r"prices_json\['YES'\]: expected a decimal string, got 'abc'"):
        decimals_from_json({"YES": "abc"}, field="prices_json")


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.text(max_size=20) | st.sampled_from(["\x00", "\ud800", "\udfff"])).map("".join))
def test_storable_text_is_utf8_without_nul_and_leaves_clean_text_alone(text: str) -> None:
    stored = storable_text(text)
    assert "\x00" not in stored and stored.encode("utf-8").decode("utf-8") == stored
    clean = "\x00" not in text and not any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    assert (stored == text) == clean
