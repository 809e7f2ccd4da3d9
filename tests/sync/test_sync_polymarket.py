"""``arena markets sync`` for Polymarket, end to end: the fake Polymarket on loopback, a real database
(SQLite and PostgreSQL), scripted faults. Every failure must leave a clear log line, no invented
price, and the other markets synced."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.core.clock import SimulatedClock
from arena.db.engine import session_scope
from arena.db.market_rows import market_row, write_markets
from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow
from arena.sync.types import SyncReport, SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from markets.http import RetryPolicy
from markets.types import Market, Venue
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market, token_ids
from tests.fakes.venue_server import Fault

pytestmark = pytest.mark.anyio
START = datetime(2026, 8, 21, 12, tzinfo=UTC)
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=1.0)
NO_HISTORY = SyncSettings(history_days=0)
MID, GAMMA = "polymarket-clob-mid", "polymarket-gamma"


def key(index: int) -> str:
    return f"polymarket:{REAL_MARKETS[index][0]}"


@pytest.fixture
def fake():
    with FakePolymarket() as venue:
        for i in range(len(REAL_MARKETS)):
            venue.add(real_market(i))
        yield venue


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(START)


async def sync(
    engine: Engine, fake: FakePolymarket, clock: SimulatedClock, settings: SyncSettings = NO_HISTORY
) -> SyncReport:
    urls = VenueUrls(gamma=fake.url, clob=fake.url)
    return await sync_venue(engine, clock, Venue.POLYMARKET, settings, urls=urls, policy=FAST)


def count(engine: Engine, table: Any, *where: Any) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(table).where(*where)).one()


def snapshots(engine: Engine, market_id: str, source: str) -> list[MarketSnapshotRow]:
    with Session(engine) as session:
        query = select(MarketSnapshotRow).where(
            MarketSnapshotRow.market_id == market_id, MarketSnapshotRow.source == source
        )
        return list(session.exec(query.order_by(col(MarketSnapshotRow.observed_at))))


async def test_first_sync_stores_markets_and_prices_with_provenance(engine, fake, clock) -> None:
    report = await sync(engine, fake, clock)
    # Starmer (0.9885) and Real Madrid (0.0005) are already decided: left out.
    assert (report.listed, report.selected, report.problems) == (8, 6, [])
    assert count(engine, MarketRow) == 6 and count(engine, MarketRow, MarketRow.id == key(6)) == 0
    with Session(engine) as session:
        row = session.get(MarketRow, key(0))
    assert row is not None and row.raw_json == real_market(0) and row.first_seen_at == START
    assert row.token_ids_json == dict(zip(["YES", "NO"], token_ids(REAL_MARKETS[0][0]), strict=True))
    (mid,) = snapshots(engine, key(0), MID)
    assert mid.prices_json == {"YES": "0.365", "NO": "0.635"} and mid.observed_at == START
    assert mid.bids_json == {"YES": "0.360", "NO": "0.630"} and mid.asks_json == {
        "YES": "0.370",
        "NO": "0.640",
    }
    assert mid.raw_json["YES"] == {
        "token_id": row.token_ids_json["YES"],
        "mid": "0.365",
        "best_bid": "0.360",
        "best_ask": "0.370",
    }
    (comparison,) = snapshots(engine, key(0), GAMMA)
    assert comparison.prices_json == {"YES": "0.365", "NO": "0.635"}
    assert comparison.raw_json == {"outcomePrices": real_market(0)["outcomePrices"]}


async def test_rerun_without_change_writes_nothing_and_changes_are_written(engine, fake, clock) -> None:
    await sync(engine, fake, clock)
    before = (count(engine, MarketRow), count(engine, MarketSnapshotRow))
    clock.advance(timedelta(minutes=1))
    again = await sync(engine, fake, clock)
    assert (again.markets_written, again.snapshots_written) == (0, 0)
    assert (count(engine, MarketRow), count(engine, MarketSnapshotRow)) == before
    yes = token_ids(REAL_MARKETS[1][0])[0]
    fake.set_mid(yes, "0.26", REAL_MARKETS[1][0])
    clock.advance(timedelta(minutes=1))
    changed = await sync(engine, fake, clock)
    assert (changed.markets_written, changed.snapshots_written) == (0, 1)
    assert [s.prices_json["YES"] for s in snapshots(engine, key(1), MID)] == ["0.245", "0.26"]
    clock.advance(SyncSettings().refresh_after)
    heartbeat = await sync(engine, fake, clock)
    assert heartbeat.snapshots_written == 12  # unchanged prices re-confirmed once refresh_after has passed


async def test_filters_top_n_liquidity_and_close_date(engine, fake, clock) -> None:
    fake.update("560003", liquidityNum=500.0, liquidity="500.0")
    report = await sync(engine, fake, clock, SyncSettings(top_n=3, max_days_to_close=132, history_days=0))
    with Session(engine) as session:
        kept = set(session.exec(select(MarketRow.id)))
    # By volume: 0, 1 (closes 2027-01-01, too far), 2, 3 (thin), 4, ...
    assert kept == {key(0), key(2), key(4)} and report.selected == 3
    seen = fake.requests_to("/markets/keyset")[0].query
    assert seen["end_date_max"] == ["2026-12-31T12:00:00Z"] and seen["liquidity_num_min"] == ["1000"]


async def test_429_and_timeouts_are_retried_and_everything_is_synced(engine, fake, clock, caplog) -> None:
    fake.fail("/markets/keyset", Fault(status=429, retry_after="0"))
    fake.fail("/midpoints", Fault(delay=1.5))
    with caplog.at_level(logging.WARNING):
        report = await sync(engine, fake, clock)
    assert report.problems == [] and report.snapshots_written == 12
    assert "HTTP 429; retry 1/2" in caplog.text and "timed out after 1s" in caplog.text


async def test_bad_or_missing_midpoints_record_no_price_for_that_market_only(
    engine, fake, clock, caplog
) -> None:
    bad = {0: "NaN", 1: "1.5", 2: None}  # NaN, out of range, no order book (404 / absent)
    for index, value in bad.items():
        fake.set_mid(token_ids(REAL_MARKETS[index][0])[0], value, REAL_MARKETS[index][0])
    fake.fail("/midpoints", Fault(status=500), times=FAST.attempts)  # and the batch endpoint is down
    with caplog.at_level(logging.WARNING):
        report = await sync(engine, fake, clock)
    for index in bad:
        assert snapshots(engine, key(index), MID) == []
        assert len(snapshots(engine, key(index), GAMMA)) == 1  # the comparison price was fine
    assert all(len(snapshots(engine, key(i), MID)) == 1 for i in (3, 4, 5))
    assert {subject for subject, _ in report.problems} == {key(0), key(1), key(2)}
    assert (
        f"sync polymarket: {key(0)}: no accounting price recorded" in caplog.text
        and "must be finite" in caplog.text
    )
    assert "must be within [0, 1], got '1.5'" in caplog.text and "No orderbook exists" in caplog.text
    assert count(engine, MarketSnapshotRow, col(MarketSnapshotRow.prices_json).is_not(None)) == 9


async def test_malformed_gamma_prices_skip_that_market_only(engine, fake, clock, caplog) -> None:
    fake.update("560000", outcomePrices='["NaN", "0.6"]')
    fake.update("560002", clobTokenIds="[1, 2]")
    with caplog.at_level(logging.WARNING):
        report = await sync(engine, fake, clock)
    assert report.selected == 4 and count(engine, MarketRow) == 4
    assert (
        "outcomePrices[YES] must be finite" in caplog.text
        and "'clobTokenIds' must hold one decimal token id" in caplog.text
    )


async def test_prices_are_requested_while_the_listing_is_still_read(engine, fake, clock) -> None:
    fake.populate(600)  # 6 pages; the first 500 tokens are known after 3 of them
    report = await sync(engine, fake, clock, SyncSettings(top_n=700, history_days=0, max_days_to_close=None))
    assert report.selected == 606 and report.problems == []  # with the 8 real markets, 2 decided
    paths = [seen.path for seen in fake.seen]
    last_page = len(paths) - 1 - paths[::-1].index("/markets/keyset")
    assert paths.index("/midpoints") < last_page and paths.index("/books") < last_page
    assert sorted(len(s.body) for s in fake.requests_to("/midpoints")) == [212, 500, 500]


async def test_a_malformed_listing_page_keeps_what_was_listed(engine, fake, clock, caplog) -> None:
    fake.populate(150)

    def break_next_page(seen: Any) -> None:
        if seen.path == "/markets/keyset" and "after_cursor" not in seen.query:
            fake.fail(seen.path, Fault(body=b'{"markets": [{"id": '), times=FAST.attempts)

    fake.after_request = break_next_page
    with caplog.at_level(logging.WARNING):
        report = await sync(engine, fake, clock, SyncSettings(top_n=1000, history_days=0))
    assert report.selected == 100 and count(engine, MarketRow) == 100
    assert "listing: stopped early after 100 markets" in caplog.text and "body is not JSON" in caplog.text


async def test_market_disappearing_between_pages_and_between_runs(engine, fake, clock, caplog) -> None:
    fake.populate(150)
    removed: list[str] = []

    def vanish(seen: Any) -> None:
        if seen.path == "/markets/keyset" and not removed:
            removed.append("700120")
            fake.remove("700120")  # listed on page 2, gone before it is asked for

    fake.after_request = vanish
    first = await sync(engine, fake, clock, SyncSettings(top_n=1000, history_days=0))
    assert first.selected == 150 + 6 - 1 and first.problems == []
    fake.after_request = None
    gone = fake.markets["700007"]
    fake.remove("700007")
    clock.advance(timedelta(minutes=30))
    with caplog.at_level(logging.WARNING):
        second = await sync(engine, fake, clock, SyncSettings(top_n=1000, history_days=0))
    gone_id = f"polymarket:{gone['conditionId']}"
    assert second.gone == [gone_id] and f"{gone_id}: gone: Gamma no longer knows market 700007" in caplog.text
    assert count(engine, ResolutionRow) == 0  # nothing invented for it
    assert len(snapshots(engine, gone_id, MID)) == 1 and second.selected == 150 + 6 - 2


async def test_resolution_flips_from_proposed_to_resolved(engine, fake, clock, caplog) -> None:
    await sync(engine, fake, clock)
    fake.update("560003", closed=True, umaResolutionStatus="proposed", outcomePrices='["0", "1"]')
    clock.advance(timedelta(hours=1))
    with caplog.at_level(logging.DEBUG, logger="arena.sync"):  # a line per pending market: DEBUG
        proposed = await sync(engine, fake, clock)
    assert count(engine, ResolutionRow) == 0 and proposed.refreshed == 1
    assert [u.reason for u in proposed.undecided] == ["closed; UMA status 'proposed' is not final"]
    assert f"{key(3)} not resolved yet: closed; UMA status 'proposed' is not final" in caplog.text
    assert {r.levelno for r in caplog.records if "not resolved yet" in r.getMessage()} == {logging.DEBUG}
    assert len(snapshots(engine, key(3), MID)) == 1  # closed markets get no new accounting price
    fake.update("560003", umaResolutionStatus="resolved", umaEndDate="2026-08-21T13:30:00Z")
    clock.advance(timedelta(hours=1))
    resolved = await sync(engine, fake, clock)
    assert resolved.resolutions_written == 1
    with Session(engine) as session:
        row = session.exec(select(ResolutionRow)).one()
    assert (row.market_id, row.kind, row.payouts_json) == (key(3), "NO", {"YES": "0", "NO": "1"})
    assert row.resolved_at == datetime(2026, 8, 21, 13, 30, tzinfo=UTC) and row.detected_at == clock.now()
    assert row.raw_json["umaResolutionStatus"] == "resolved"
    clock.advance(timedelta(hours=1))
    later = await sync(engine, fake, clock)
    assert later.resolutions_written == 0 and later.refreshed == 0 and count(engine, ResolutionRow) == 1


async def test_fifty_fifty_and_stored_markets_outside_the_top_n(engine, fake, clock) -> None:
    await sync(engine, fake, clock)
    fake.update("560005", volumeNum=1.0, volume="1.0")  # drops to the bottom, still open
    fake.update("560002", closed=True, umaResolutionStatus="resolved", outcomePrices='["0.5", "0.5"]')
    clock.advance(timedelta(hours=1))
    report = await sync(engine, fake, clock, SyncSettings(top_n=3, history_days=0))
    assert report.selected == 3 and report.refreshed == 3  # 2 (resolved), 4 and 5 (out of the top 3)
    assert len(snapshots(engine, key(5), MID)) == 2  # agents may hold it: still marked
    with Session(engine) as session:
        row = session.exec(select(ResolutionRow)).one()
    assert (row.market_id, row.kind, row.payouts_json) == (key(2), "5050", {"YES": "0.5", "NO": "0.5"})


async def test_new_markets_get_history_up_to_now_only(engine, fake, clock) -> None:
    yes = token_ids(REAL_MARKETS[0][0])[0]
    hour = int(START.timestamp()) - 3 * 3600
    fake.histories[yes] = [
        {"t": hour + h * 3600, "p": 0.35 + h / 100} for h in range(4)
    ]  # last bucket ends after now
    report = await sync(engine, fake, clock, SyncSettings(history_days=1))
    history = snapshots(engine, key(0), "polymarket-clob-history")
    assert [(s.observed_at, s.prices_json) for s in history] == [
        (START - timedelta(hours=2), {"YES": "0.35"}),
        (START - timedelta(hours=1), {"YES": "0.36"}),
        (START, {"YES": "0.37"}),
    ]
    assert report.history_written == 3 and len(fake.requests_to("/prices-history")) == 6
    clock.advance(timedelta(hours=1))
    again = await sync(engine, fake, clock, SyncSettings(history_days=1))
    assert again.history_written == 0 and len(fake.requests_to("/prices-history")) == 6


async def test_events_discovery(engine, fake, clock) -> None:
    fake.add_event("2890", ["560000", "560004"], title="2026", volume=9e6, liquidity=5e4, category="World")
    report = await sync(engine, fake, clock, SyncSettings(discovery="events", history_days=0))
    assert report.selected == 2 and fake.requests_to("/events/keyset")[0].query["order"] == ["volume"]
    with Session(engine) as session:
        assert session.get(MarketRow, key(4)).raw_json["conditionId"] == REAL_MARKETS[4][0]  # type: ignore[union-attr]


async def test_long_decimal_volumes_are_stored_rounded_to_the_column_scale(engine, fake, clock) -> None:
    fake.update("560000", volumeNum=12071015.216477996, volume="12071015.216477996")
    await sync(engine, fake, clock)
    with Session(engine) as session:
        row = session.get(MarketRow, key(0))
    assert row is not None and row.volume == Decimal("12071015.216478")
    assert row.raw_json["volume"] == "12071015.216477996"  # the raw payload keeps every digit


async def test_market_rows_written_by_others_are_not_tracked(engine, fake, clock) -> None:
    """A replay cohort stores its markets in the same table (no snapshots): sync must leave them be."""
    replay_market = Market(Venue.POLYMARKET, "0x" + "12" * 32, "A resolved replay market?")
    with session_scope(engine) as session:
        write_markets(session, [market_row(replay_market, {}, START)])
    report = await sync(engine, fake, clock)
    assert (report.refreshed, report.gone, report.problems) == (0, [], [])
    assert all("condition_ids" not in s.query for s in fake.requests_to("/markets/keyset"))


async def test_prices_are_stamped_when_read_not_when_the_run_began(engine, fake, clock) -> None:
    """A price read a minute into the run must not be known at the run's start (point in time)."""

    def slow_clob(seen: Any) -> None:
        if seen.path == "/midpoints":
            clock.advance(timedelta(minutes=1))

    fake.after_request = slow_clob
    report = await sync(engine, fake, clock)
    assert report.observed_at == START
    (mid,) = snapshots(engine, key(0), MID)
    assert mid.observed_at == START + timedelta(minutes=1)


async def test_a_market_whose_history_cannot_be_read_gets_none_and_the_others_do(
    engine, fake, clock, caplog
) -> None:
    good, bad = token_ids(REAL_MARKETS[0][0])[0], token_ids(REAL_MARKETS[1][0])[0]
    bucket = int(START.timestamp()) - 2 * 3600
    fake.histories[good] = [{"t": bucket, "p": 0.35}]
    fake.histories[bad] = [{"t": bucket, "p": "NaN"}]
    with caplog.at_level(logging.WARNING):
        report = await sync(engine, fake, clock, SyncSettings(history_days=1))
    history = snapshots(engine, key(0), "polymarket-clob-history")
    assert [(s.observed_at, s.prices_json) for s in history] == [
        (START - timedelta(hours=1), {"YES": "0.35"})
    ]
    assert snapshots(engine, key(1), "polymarket-clob-history") == []  # nothing invented for it
    assert len(snapshots(engine, key(1), MID)) == 1  # its current price is still recorded
    ((subject, reason),) = report.problems
    assert (
        subject == key(1) and reason.startswith("price history not fetched: ") and "must be finite" in reason
    )
    assert f"sync polymarket: {key(1)}: price history not fetched" in caplog.text


async def test_a_non_standard_json_constant_in_a_payload_is_kept_as_text(engine, fake, clock) -> None:
    """Venues send bare NaN; the raw payload is stored (strict JSON in the database) with it as text."""
    fake.update("560000", competitive=float("nan"))  # the fake writes it as a bare NaN token
    report = await sync(engine, fake, clock)
    assert report.problems == [] and count(engine, MarketRow) == 6
    with Session(engine) as session:
        row = session.get(MarketRow, key(0))
    assert row is not None and row.raw_json["competitive"] == "NaN"


async def test_a_row_the_database_refuses_costs_that_market_only(engine, fake, clock, caplog) -> None:
    fake.update("560001", volumeNum=1e13, volume="1e13")  # beyond the money column's range
    with caplog.at_level(logging.WARNING):
        report = await sync(engine, fake, clock)
    assert count(engine, MarketRow) == 5 and count(engine, MarketRow, MarketRow.id == key(1)) == 0
    assert report.markets_written == 5 and report.snapshots_written == 10  # counted once committed
    ((subject, reason),) = report.problems
    assert subject == key(1) and reason.startswith("not written: ") and "out of range" in reason
    assert "\n" not in reason and "INSERT" not in caplog.text  # the cause, not the statement and its rows
