"""``DbMarketSource`` is point in time: after several syncs over simulated time (price moves, a market
closing, a proposed then final resolution, backfilled history), the shared harness
(markets.replay.point_in_time) finds no leak at any time, and specific answers are checked.
Both live venues are covered: Polymarket and Manifold store differently shaped observations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.core.clock import SimulatedClock
from arena.db.market_source import DbMarketSource
from arena.db.models import MarketSnapshotRow
from arena.sync.types import SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from markets.http import RetryPolicy
from markets.replay.point_in_time import check_point_in_time, find_violations, probe_times
from markets.types import NO, YES, Venue
from tests.fakes.manifold_server import DOCS_BETS, FakeManifold, lite_market, millis
from tests.fakes.manifold_server import REAL_MARKETS as MANIFOLD_MARKETS
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market, token_ids

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 8, 21, 12, tzinfo=UTC)
FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02, timeout=2.0)
SETTINGS = SyncSettings(history_days=1)


def key(index: int) -> str:
    return f"polymarket:{REAL_MARKETS[index][0]}"


def yes_token(index: int) -> str:
    return token_ids(REAL_MARKETS[index][0])[0]


@pytest.fixture
async def recorded(engine: Engine) -> Engine:
    """Four syncs: T0, T0+2h (a price moves), T0+4h (market 3 closed, proposed), T0+6h (resolved)."""
    clock = SimulatedClock(T0)
    with FakePolymarket() as fake:
        for i in range(6):
            fake.add(real_market(i))
        fake.histories[yes_token(0)] = [
            {"t": int((T0 - timedelta(hours=h)).timestamp()), "p": 0.30 + h / 100} for h in range(1, 5)
        ]

        async def sync() -> None:
            urls = VenueUrls(gamma=fake.url, clob=fake.url)
            await sync_venue(engine, clock, Venue.POLYMARKET, SETTINGS, urls=urls, policy=FAST)

        await sync()
        clock.set(T0 + timedelta(hours=2))
        fake.set_mid(yes_token(1), "0.30", REAL_MARKETS[1][0])
        await sync()
        clock.set(T0 + timedelta(hours=4))
        fake.update("560003", closed=True, umaResolutionStatus="proposed", outcomePrices='["1", "0"]')
        await sync()
        clock.set(T0 + timedelta(hours=6))
        # The venue resolved at +4h30, the arena only learns at +6h.
        fake.update("560003", umaResolutionStatus="resolved", umaEndDate="2026-08-21T16:30:00Z")
        await sync()
    return engine


def times() -> list[datetime]:
    return [T0 - timedelta(hours=6) + timedelta(minutes=20 * i) for i in range(60)]


async def test_the_db_source_passes_the_point_in_time_harness(recorded: Engine) -> None:
    source = DbMarketSource(recorded, [Venue.POLYMARKET], max_price_age=timedelta(hours=3))
    check_point_in_time(source, times())
    assert find_violations(source, list(reversed(times()))) == []
    check_point_in_time(source, probe_times(T0, T0 + timedelta(hours=10), count=30, seed=7))


async def test_prices_resolutions_and_openness_as_of(recorded: Engine) -> None:
    source = DbMarketSource(recorded, [Venue.POLYMARKET], max_price_age=timedelta(hours=3))
    assert source.open_markets(T0 - timedelta(seconds=1)) == []
    before_move = source.latest_prices([key(1)], T0 + timedelta(hours=1, minutes=59))[key(1)]
    after_move = source.latest_prices([key(1)], T0 + timedelta(hours=2))[key(1)]
    assert before_move.prices[YES] == Decimal("0.245") and after_move.prices[YES] == Decimal("0.30")
    assert after_move.source == "polymarket-clob-mid" and after_move.bids[YES] == Decimal("0.295")
    # Market 3: open until sync saw it closed at +4h, even though its last price (+2h) is still fresh.
    assert key(3) in {m.market_id for m in source.open_markets(T0 + timedelta(hours=3, minutes=59))}
    assert key(3) not in {m.market_id for m in source.open_markets(T0 + timedelta(hours=4))}
    # Its resolution counts from when the arena learned it (+6h), not the venue's +4h30.
    assert source.resolutions(T0 + timedelta(hours=5, minutes=59)) == []
    (resolution,) = source.resolutions(T0 + timedelta(hours=6))
    assert resolution.market_id == key(3) and dict(resolution.payouts) == {YES: Decimal(1), NO: Decimal(0)}
    assert resolution.resolved_at == T0 + timedelta(hours=6)
    # Without a sync for longer than max_price_age, nothing is open, yet the last real price remains.
    assert source.open_markets(T0 + timedelta(hours=9, minutes=1)) == []
    assert source.latest_prices([key(0)], T0 + timedelta(days=30))[key(0)].observed_at == T0 + timedelta(
        hours=6
    )


async def test_snapshot_history_holds_observed_prices_only(recorded: Engine) -> None:
    source = DbMarketSource(recorded, [Venue.POLYMARKET], max_price_age=timedelta(hours=3), history_points=2)
    snapshot = source.snapshot(T0 + timedelta(hours=4))
    entry = snapshot.by_id()[key(1)]
    assert entry.price.observed_at == T0 + timedelta(hours=4)
    assert entry.history == (
        (T0 + timedelta(hours=2), Decimal("0.30")),
        (T0 + timedelta(hours=4), Decimal("0.30")),
    )
    # Backfilled venue history (learned at T0, stamped earlier) is stored but never served as of a time.
    assert source.snapshot(T0).by_id()[key(0)].history == ((T0, Decimal("0.365")),)
    with Session(recorded) as session:
        backfilled = session.exec(
            select(MarketSnapshotRow.observed_at).where(MarketSnapshotRow.source == "polymarket-clob-history")
        ).all()
    assert sorted(backfilled) == [T0 - timedelta(hours=h) for h in (3, 2, 1)] + [T0]
    assert [e.market.market_id for e in snapshot.entries] == sorted(
        e.market.market_id for e in snapshot.entries
    )
    assert snapshot.content_hash() == source.snapshot(T0 + timedelta(hours=4)).content_hash()


def manifold_key(index: int) -> str:
    return f"manifold:{MANIFOLD_MARKETS[index][0]}"


@pytest.fixture
async def manifold_recorded(engine: Engine) -> Engine:
    """Four Manifold syncs: T0 (market 0 has bets before T0: backfilled), T0+2h (market 1 moves),
    T0+4h (market 2 past its close, unresolved), T0+6h (market 2 resolved YES at +4h30)."""
    clock = SimulatedClock(T0)
    market_id = MANIFOLD_MARKETS[0][0]
    bets = [
        DOCS_BETS[1]
        | {"id": f"b{h}", "contractId": market_id, "createdTime": millis(f"{T0 - timedelta(hours=h)}")}
        for h in (1, 3)
    ]
    with FakeManifold() as fake:
        for i in range(len(MANIFOLD_MARKETS)):
            fake.add(lite_market(i), bets if i == 0 else None)

        async def sync() -> None:
            settings = SyncSettings(history_days=1, max_days_to_close=None)
            await sync_venue(
                engine, clock, Venue.MANIFOLD, settings, urls=VenueUrls(manifold=fake.url), policy=FAST
            )

        await sync()
        clock.set(T0 + timedelta(hours=2))
        fake.update(MANIFOLD_MARKETS[1][0], probability=0.3)
        await sync()
        clock.set(T0 + timedelta(hours=4))
        fake.update(MANIFOLD_MARKETS[2][0], closeTime=millis(f"{T0 + timedelta(hours=3)}"))
        await sync()
        clock.set(T0 + timedelta(hours=6))
        resolved_at = millis(f"{T0 + timedelta(hours=4, minutes=30)}")
        fake.update(MANIFOLD_MARKETS[2][0], isResolved=True, resolution="YES", resolutionTime=resolved_at)
        await sync()
    return engine


async def test_the_db_source_passes_the_harness_on_manifold_data(manifold_recorded: Engine) -> None:
    source = DbMarketSource(manifold_recorded, [Venue.MANIFOLD], max_price_age=timedelta(hours=3))
    check_point_in_time(source, times())
    assert find_violations(source, list(reversed(times()))) == []
    check_point_in_time(source, probe_times(T0, T0 + timedelta(hours=10), count=30, seed=3))
    # Not vacuous: the moves, the close and the resolution are all visible at the right times.
    moved = source.latest_prices([manifold_key(1)], T0 + timedelta(hours=2))[manifold_key(1)]
    assert moved.prices == {YES: Decimal("0.3"), NO: Decimal("0.7")} and moved.source == "manifold-prob"
    # Its close time moved to +3h, but the arena only synced that at +4h: open at +3h as it was then.
    open_at = [{m.market_id for m in source.open_markets(T0 + timedelta(hours=h))} for h in (3, 4)]
    assert manifold_key(2) in open_at[0] and manifold_key(2) not in open_at[1]
    # ...and served without that later close time, so no answer calls it both open and closed
    served = {m.market_id: m for m in source.open_markets(T0 + timedelta(hours=3))}[manifold_key(2)]
    assert served.close_time is None
    assert source.snapshot(T0 + timedelta(hours=3)).by_id()[manifold_key(2)].market.close_time is None
    assert source.resolutions(T0 + timedelta(hours=5, minutes=59)) == []
    (resolution,) = source.resolutions(T0 + timedelta(hours=6))
    assert (resolution.market_id, resolution.resolved_at) == (manifold_key(2), T0 + timedelta(hours=6))
    # Backfilled bets (stamped before T0, learned at T0) are stored but never served as of a time.
    assert source.snapshot(T0).by_id()[manifold_key(0)].history == ((T0, Decimal("0.498785")),)


async def test_a_close_time_known_at_the_time_closes_the_market(engine: Engine) -> None:
    clock = SimulatedClock(T0)
    with FakePolymarket() as fake:
        fake.add(real_market(0, end="2026-08-21T13:00:00Z"))
        urls = VenueUrls(gamma=fake.url, clob=fake.url)
        await sync_venue(
            engine, clock, Venue.POLYMARKET, SyncSettings(history_days=0), urls=urls, policy=FAST
        )
    source = DbMarketSource(engine, [Venue.POLYMARKET], max_price_age=timedelta(hours=3))
    assert [m.market_id for m in source.open_markets(T0 + timedelta(minutes=59))] == [key(0)]
    assert source.open_markets(T0 + timedelta(hours=1)) == []  # its price is still fresh, but it closed
