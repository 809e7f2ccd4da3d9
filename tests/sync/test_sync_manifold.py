"""``arena markets sync --venue manifold`` end to end: the fake Manifold on loopback and a real database."""

from __future__ import annotations

import copy
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, select

from arena.core.clock import SimulatedClock
from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow
from arena.sync.types import SyncReport, SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from markets.http import RetryPolicy
from markets.types import Venue
from tests.fakes.manifold_server import (
    DOCS_BETS,
    DOCS_LITE_MARKET,
    REAL_MARKETS,
    FakeManifold,
    lite_market,
    millis,
    multiple_choice_market,
)
from tests.fakes.venue_server import Fault

pytestmark = pytest.mark.anyio
START = datetime(2026, 8, 21, 12, tzinfo=UTC)
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=1.0)
SETTINGS = SyncSettings(history_days=0, max_days_to_close=None)


def key(index: int) -> str:
    return f"manifold:{REAL_MARKETS[index][0]}"


@pytest.fixture
def fake():
    with FakeManifold() as venue:
        for i in range(len(REAL_MARKETS)):
            venue.add(lite_market(i))
        venue.add(copy.deepcopy(DOCS_LITE_MARKET))  # resolved in 2022: not open, not kept
        venue.add(lite_market(0, id="multi", outcomeType="MULTIPLE_CHOICE", question="Which?"))
        yield venue


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(START)


async def sync(
    engine: Engine, fake: FakeManifold, clock: SimulatedClock, settings: SyncSettings = SETTINGS
) -> SyncReport:
    return await sync_venue(
        engine, clock, Venue.MANIFOLD, settings, urls=VenueUrls(manifold=fake.url), policy=FAST
    )


def rows(engine: Engine, model: Any, *where: Any) -> list[Any]:
    with Session(engine) as session:
        return list(session.exec(select(model).where(*where)))


async def test_first_sync_keeps_open_binary_markets_with_probability_prices(engine, fake, clock) -> None:
    report = await sync(engine, fake, clock)
    # the multiple-choice market whose full payload lists no answers summing to one is not tradable
    assert (report.listed, report.selected, report.unsupported, report.problems) == (5, 4, 1, [])
    assert {m.id for m in rows(engine, MarketRow)} == {key(i) for i in range(4)}
    (snap,) = rows(engine, MarketSnapshotRow, MarketSnapshotRow.market_id == key(2))
    assert snap.source == "manifold-prob" and snap.prices_json == {"YES": "0.2282", "NO": "0.7718"}
    assert snap.raw_json == {
        "probability": 0.2282,
        "p": DOCS_LITE_MARKET["p"],
        "pool": DOCS_LITE_MARKET["pool"],
        "lastBetTime": millis("2026-08-20T00:00:00+00:00") - 2 * 60_000,
    }
    clock.advance(timedelta(minutes=2))
    again = await sync(engine, fake, clock)
    assert (again.markets_written, again.snapshots_written) == (0, 0)


async def test_filters_and_top_n_by_volume(engine, fake, clock) -> None:
    report = await sync(engine, fake, clock, SyncSettings(top_n=2, max_days_to_close=365 * 2, history_days=0))
    # 0 closes 2035 (too far); by volume the rest rank 1, 2, 3.
    assert {m.id for m in rows(engine, MarketRow)} == {key(1), key(2)} and report.selected == 2


async def test_bad_probability_skips_only_that_market(engine, fake, clock, caplog) -> None:
    fake.update(REAL_MARKETS[1][0], probability=float("nan"))
    fake.update(REAL_MARKETS[2][0], probability=1.2)
    with caplog.at_level(logging.WARNING):
        report = await sync(engine, fake, clock)
    assert {m.id for m in rows(engine, MarketRow)} == {key(0), key(3)}
    assert len(report.problems) == 2 and "probability must be finite" in caplog.text
    assert "probability must be within [0, 1], got 1.2" in caplog.text


async def test_stored_markets_are_refreshed_resolved_and_gone(engine, fake, clock, caplog) -> None:
    await sync(engine, fake, clock)
    fake.update(
        REAL_MARKETS[1][0],
        isResolved=True,
        resolution="CANCEL",
        resolutionTime=millis("2026-08-21T12:30:00+00:00"),
        lastBetTime=0,
    )
    fake.update(REAL_MARKETS[2][0], closeTime=millis("2026-08-21T12:10:00+00:00"), lastBetTime=0)
    del fake.markets[REAL_MARKETS[3][0]]
    fake.fail(f"/v0/market/{REAL_MARKETS[2][0]}", Fault(status=502))
    clock.advance(timedelta(hours=1))
    with caplog.at_level(logging.INFO):
        report = await sync(
            engine, fake, clock, SyncSettings(top_n=1, history_days=0, max_days_to_close=None)
        )
    (resolution,) = rows(engine, ResolutionRow)
    assert (resolution.market_id, resolution.kind, resolution.payouts_json) == (key(1), "VOID", {})
    assert (
        resolution.resolved_at == datetime(2026, 8, 21, 12, 30, tzinfo=UTC)
        and resolution.detected_at == clock.now()
    )
    assert [u.reason for u in report.undecided] == ["closed; awaiting resolution"]
    assert report.gone == [key(3)] and "gone: Manifold no longer knows this market" in caplog.text
    seen = [
        (r.source, r.prices_json)
        for r in rows(engine, MarketSnapshotRow, MarketSnapshotRow.market_id == key(2))
    ]
    assert sorted(seen) == [("manifold-closed", {}), ("manifold-prob", {"YES": "0.2282", "NO": "0.7718"})]


async def test_new_markets_get_their_bet_history(engine, fake, clock) -> None:
    bets = copy.deepcopy(DOCS_BETS)
    for bet, hours in zip(bets, (3, 5), strict=True):
        bet["createdTime"] = millis("2026-08-21T12:00:00+00:00") - hours * 3_600_000
        bet["contractId"] = REAL_MARKETS[0][0]
    bets[0]["isFilled"] = True
    bets.append(
        bets[0] | {"id": "late", "createdTime": millis("2026-08-21T13:00:00+00:00"), "probAfter": 0.9}
    )
    fake.bets[REAL_MARKETS[0][0]] = bets
    report = await sync(engine, fake, clock, SyncSettings(history_days=1, max_days_to_close=None))
    history = rows(engine, MarketSnapshotRow, MarketSnapshotRow.source == "manifold-bets")
    assert sorted((h.observed_at, h.prices_json["YES"]) for h in history) == [
        (START - timedelta(hours=5), "0.5730753475"),
        (START - timedelta(hours=3), "0.5730753475"),
    ]  # the bet after "now" is not taken
    assert report.history_written == 2
    assert all(
        r.query["afterTime"] == [str(millis("2026-08-20T12:00:00+00:00"))]
        for r in fake.requests_to("/v0/bets")
    )
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(MarketSnapshotRow)).one() == 4 + 2


async def test_a_raw_payload_past_its_limit_is_stored_as_its_size_and_sha256(engine, clock) -> None:
    with FakeManifold() as venue:
        venue.add(lite_market(0, creatorBio="b" * 5000))  # a field the sync does not read
        venue.add(lite_market(1))
        settings = SyncSettings(history_days=0, max_days_to_close=None, raw_kept_bytes=2000)
        report = await sync(engine, venue, clock, settings)
    assert report.selected == 2 and report.problems == []
    big, small = (rows(engine, MarketRow, MarketRow.id == key(i))[0] for i in (0, 1))
    assert big.raw_json["not_kept"].endswith("exceeds the limit of 2,000")
    assert big.raw_json["id"] == REAL_MARKETS[0][0] and len(big.raw_json["sha256"]) == 64
    assert small.raw_json["id"] == REAL_MARKETS[1][0] and "not_kept" not in small.raw_json
    assert big.question == REAL_MARKETS[0][1]  # what was parsed from it is stored as ever


COLOURS = {"Red": 0.5, "Green": 0.3, "Blue": 0.2}


async def test_a_multiple_choice_market_is_synced_with_a_price_per_answer(engine, fake, clock) -> None:
    chosen = multiple_choice_market(1, COLOURS, volume=500_000)
    independent = multiple_choice_market(2, COLOURS, id="indep", shouldAnswersSumToOne=False, volume=400_000)
    fake.add(chosen)
    fake.add(independent)
    report = await sync(engine, fake, clock)
    assert (report.selected, report.unsupported, report.problems) == (5, 2, [])  # "multi" and "indep"
    with Session(engine) as session:
        market = session.get(MarketRow, f"manifold:{chosen['id']}")
        assert session.get(MarketRow, "manifold:indep") is None
    assert market is not None and market.outcomes_json == ["Red", "Green", "Blue"]
    assert market.token_ids_json == {
        "Red": f"{chosen['id']}-a0",
        "Green": f"{chosen['id']}-a1",
        "Blue": f"{chosen['id']}-a2",
    }
    assert market.venue_status == "trading"
    (snap,) = rows(engine, MarketSnapshotRow, MarketSnapshotRow.market_id == market.id)
    assert snap.source == "manifold-prob" and snap.prices_json == {
        "Red": "0.5",
        "Green": "0.3",
        "Blue": "0.2",
    }
    assert fake.requests_to(f"/v0/market/{chosen['id']}")  # read whole: a listing names no answers

    fake.update(
        chosen["id"],
        isResolved=True,
        resolution=f"{chosen['id']}-a1",
        resolutionTime=millis("2026-08-21T12:30:00+00:00"),
    )
    clock.advance(timedelta(hours=1))
    await sync(engine, fake, clock)
    (resolution,) = rows(engine, ResolutionRow)
    assert (resolution.market_id, resolution.kind) == (market.id, "OUTCOME")
    assert resolution.payouts_json == {"Red": "0", "Green": "1", "Blue": "0"}


@pytest.mark.parametrize(
    ("resolution", "stored", "waiting"),
    [
        ("CANCEL", ("VOID", {}), []),
        ("MKT", None, ["resolved MKT: proportional payouts across answers need a manual resolution"]),
    ],
)
async def test_a_multiple_choice_market_cancelled_or_split(
    engine, fake, clock, resolution, stored, waiting
) -> None:
    chosen = multiple_choice_market(1, COLOURS, volume=500_000)
    fake.add(chosen)
    await sync(engine, fake, clock)
    fake.update(
        chosen["id"], isResolved=True, resolution=resolution, closeTime=millis("2026-08-21T12:10:00+00:00")
    )
    clock.advance(timedelta(hours=1))
    report = await sync(engine, fake, clock)
    assert [(r.kind, r.payouts_json) for r in rows(engine, ResolutionRow)] == ([stored] if stored else [])
    assert [u.reason for u in report.undecided] == waiting
