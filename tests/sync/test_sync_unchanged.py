"""A re-sync skips markets whose venue answers did not change, and still writes every change.

End to end on the fake venues over loopback HTTP and a real database (SQLite and PostgreSQL):
the skip is seen in the report's ``unchanged`` count and in rows left untouched (``recorded_at``
is restamped by every write), the changes in the rows they produce.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.core.clock import SimulatedClock
from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow
from arena.sync.polymarket import _entry
from arena.sync.types import SyncReport, SyncSettings, Tracked
from arena.sync.unchanged import digest
from arena.sync.venues import VenueUrls, sync_venue
from markets.http import RetryPolicy
from markets.polymarket import gamma
from markets.types import Venue
from tests.fakes.manifold_server import REAL_MARKETS as MANIFOLD_MARKETS
from tests.fakes.manifold_server import FakeManifold, lite_market
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market, token_ids

pytestmark = pytest.mark.anyio
START = datetime(2026, 8, 21, 12, tzinfo=UTC)
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=1.0)
SETTINGS = SyncSettings(history_days=0, max_days_to_close=None)
MID = "polymarket-clob-mid"


@pytest.fixture
def polymarket():
    with FakePolymarket() as venue:
        for i in range(len(REAL_MARKETS)):
            venue.add(real_market(i))
        yield venue


@pytest.fixture
def manifold():
    with FakeManifold() as venue:
        for i in range(len(MANIFOLD_MARKETS)):
            venue.add(lite_market(i))
        yield venue


async def sync_polymarket(engine: Engine, fake: FakePolymarket, clock: SimulatedClock) -> SyncReport:
    urls = VenueUrls(gamma=fake.url, clob=fake.url)
    return await sync_venue(engine, clock, Venue.POLYMARKET, SETTINGS, urls=urls, policy=FAST)


async def sync_manifold(engine: Engine, fake: FakeManifold, clock: SimulatedClock) -> SyncReport:
    urls = VenueUrls(manifold=fake.url)
    return await sync_venue(engine, clock, Venue.MANIFOLD, SETTINGS, urls=urls, policy=FAST)


def market_rows(engine: Engine) -> dict[str, tuple[Any, ...]]:
    """Each market's stored state, including the stamp and ``recorded_at`` of its last write."""
    with Session(engine) as session:
        return {
            m.id: (m.question, m.sync_stamp, m.recorded_at, m.updated_at)
            for m in session.exec(select(MarketRow))
        }


def snapshot_count(engine: Engine, *where: Any) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(MarketSnapshotRow).where(*where)).one()


async def test_an_unchanged_polymarket_resync_is_skipped_and_every_change_is_written(
    engine: Engine, polymarket: FakePolymarket
) -> None:
    clock = SimulatedClock(START)
    first = await sync_polymarket(engine, polymarket, clock)
    selected = first.selected
    stored = market_rows(engine)
    assert selected > 3 and first.unchanged == 0
    assert all(stamp for _, stamp, _, _ in stored.values())
    snapshots = snapshot_count(engine)

    clock.advance(timedelta(minutes=1))
    same = await sync_polymarket(engine, polymarket, clock)
    assert (same.unchanged, same.markets_written, same.snapshots_written) == (selected, 0, 0)
    assert market_rows(engine) == stored and snapshot_count(engine) == snapshots

    # A price moves on the CLOB only, a question is edited, a market closes resolved.
    moved, edited, closing = (f"polymarket:{REAL_MARKETS[i][0]}" for i in (1, 2, 3))
    polymarket.set_mid(token_ids(REAL_MARKETS[1][0])[0], "0.26", REAL_MARKETS[1][0])
    polymarket.update("560002", question="Edited: will it happen?")
    polymarket.update(
        "560003",
        closed=True,
        umaResolutionStatus="resolved",
        outcomePrices='["1", "0"]',
        umaEndDate="2026-08-21T12:01:00Z",
    )
    clock.advance(timedelta(minutes=1))
    changed = await sync_polymarket(engine, polymarket, clock)
    assert changed.unchanged == selected - 3
    # the edit and the resolved market's venue status ("resolved YES"); the resolution
    assert (changed.markets_written, changed.resolutions_written) == (2, 1)
    after = market_rows(engine)
    assert after[edited][0] == "Edited: will it happen?" and after[edited][1] != stored[edited][1]
    assert after[moved][1] != stored[moved][1] and after[moved][2] == stored[moved][2]  # stamp only
    with Session(engine) as session:
        latest = session.exec(
            select(MarketSnapshotRow)
            .where(MarketSnapshotRow.market_id == moved, MarketSnapshotRow.source == MID)
            .order_by(col(MarketSnapshotRow.observed_at).desc())
        ).first()
        resolved = session.exec(select(ResolutionRow).where(ResolutionRow.market_id == closing)).one()
    assert latest is not None and latest.prices_json["YES"] == "0.26"
    assert resolved.kind == "YES"
    untouched = [m for m in stored if m not in (moved, edited, closing)]
    assert all(after[m] == stored[m] for m in untouched)

    # Unchanged answers still get their heartbeat once ``refresh_after`` has passed.
    clock.advance(SETTINGS.refresh_after)
    beat = await sync_polymarket(engine, polymarket, clock)
    assert beat.unchanged == 0 and beat.snapshots_written == 2 * (selected - 1)


async def test_an_unchanged_manifold_resync_is_skipped_and_a_new_probability_is_written(
    engine: Engine, manifold: FakeManifold
) -> None:
    clock = SimulatedClock(START)
    first = await sync_manifold(engine, manifold, clock)
    stored = market_rows(engine)
    clock.advance(timedelta(minutes=1))
    same = await sync_manifold(engine, manifold, clock)
    assert (same.unchanged, same.markets_written, same.snapshots_written) == (first.selected, 0, 0)
    assert market_rows(engine) == stored

    market_id = MANIFOLD_MARKETS[0][0]
    manifold.update(market_id, probability=0.61)  # a bet moved it
    clock.advance(timedelta(minutes=1))
    changed = await sync_manifold(engine, manifold, clock)
    assert (changed.unchanged, changed.snapshots_written) == (first.selected - 1, 1)
    assert snapshot_count(engine, MarketSnapshotRow.market_id == f"manifold:{market_id}") == 2


async def test_a_price_problem_is_reported_when_the_answers_change_and_at_the_heartbeat(
    engine: Engine, polymarket: FakePolymarket
) -> None:
    """A skipped market's prices are never parsed, so its problem is not repeated by every
    re-sync: it is reported when the answers change, and again once the heartbeat is due."""
    clock = SimulatedClock(START)
    first = await sync_polymarket(engine, polymarket, clock)
    broken = f"polymarket:{REAL_MARKETS[1][0]}"
    assert first.problems == []
    polymarket.set_mid(token_ids(REAL_MARKETS[1][0])[0], None)  # its order book disappears

    def problems(report: SyncReport) -> list[str]:
        return [reason for subject, reason in report.problems if subject == broken]

    clock.advance(timedelta(minutes=1))
    changed = await sync_polymarket(engine, polymarket, clock)
    assert [p.startswith("no accounting price recorded") for p in problems(changed)] == [True]
    assert changed.unchanged == first.selected - 1

    clock.advance(timedelta(minutes=1))
    same = await sync_polymarket(engine, polymarket, clock)
    assert problems(same) == [] and same.unchanged == first.selected

    clock.advance(SETTINGS.refresh_after)
    beat = await sync_polymarket(engine, polymarket, clock)
    assert [p.startswith("no accounting price recorded") for p in problems(beat)] == [True]
    assert beat.unchanged == 0


def snapshot_keys(engine: Engine) -> set[tuple[str, str, datetime, str]]:
    """Every stored snapshot: market, source, time and YES price."""
    with Session(engine) as session:
        return {
            (s.market_id, s.source, s.observed_at, s.prices_json.get("YES", ""))
            for s in session.exec(select(MarketSnapshotRow))
        }


@pytest.mark.parametrize(
    ("change", "written"),
    [
        ("clob mid", (0, {MID: "0.3"})),  # the accounting price moves: one CLOB snapshot
        ("gamma price", (0, {"polymarket-gamma": "0.3"})),  # Gamma's comparison price: one snapshot
        ("question", (1, {})),  # an edit: the market row alone
        ("close time", (1, {})),
    ],
)
async def test_a_resync_where_one_market_changed_writes_that_market_alone(
    engine: Engine, polymarket: FakePolymarket, change: str, written: tuple[int, dict[str, str]]
) -> None:
    clock = SimulatedClock(START)
    first = await sync_polymarket(engine, polymarket, clock)
    condition = REAL_MARKETS[4][0]
    target = f"polymarket:{condition}"
    markets, snapshots = market_rows(engine), snapshot_keys(engine)
    if change == "clob mid":
        polymarket.set_mid(token_ids(condition)[0], "0.3", condition)
    elif change == "gamma price":
        polymarket.update("560004", outcomePrices='["0.3", "0.7"]')
    elif change == "question":
        polymarket.update("560004", question="Edited: will Harry Kane win the Ballon d'Or?")
    else:
        polymarket.update("560004", endDate="2026-11-30T00:00:00Z")

    clock.advance(timedelta(minutes=1))
    report = await sync_polymarket(engine, polymarket, clock)
    rows_written, prices = written
    assert (report.unchanged, report.markets_written) == (first.selected - 1, rows_written)
    assert report.snapshots_written == len(prices) and report.problems == []
    new = snapshot_keys(engine) - snapshots
    assert {(m, source, price) for m, source, _, price in new} == {(target, s, p) for s, p in prices.items()}
    after = market_rows(engine)
    assert after[target][1] != markets[target][1]  # its stamp follows the new answers
    assert {m: row for m, row in after.items() if m != target} == {
        m: row for m, row in markets.items() if m != target
    }


def test_a_listed_market_is_decoded_whole_only_when_its_payload_changed() -> None:
    payload = real_market(0)
    sent = json.dumps(payload).encode()
    listed = {k: v for k, v in payload.items() if k in gamma.ListingFields.__annotations__}
    market_id = f"polymarket:{REAL_MARKETS[0][0]}"

    def tracked(stamp: str | None) -> Tracked:
        return Tracked({market_id: REAL_MARKETS[0][0]}, {market_id: stamp}, dict, lambda *_: set())

    report = SyncReport(Venue.POLYMARKET, START)
    same = _entry(dict(listed), sent, tracked(digest(sent) + "clob"), report)
    assert same is not None and same.market is None and same.payload == listed  # not decoded whole
    assert same.whole() == payload and same.payload == payload
    changed = _entry(dict(listed), sent, tracked("another" + "clob"), report)
    assert changed is not None and changed.market is not None and changed.payload == payload
    assert report.problems == []
