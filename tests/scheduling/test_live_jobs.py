"""The scheduled jobs on a live cohort, end to end: sync from the fake Polymarket on loopback,
rounds due at their times (including catch-up after downtime), marks — through ``run_once``
exactly as ``arena serve`` runs them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, select

from arena.clock import SimulatedClock
from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.db.models import DecisionRow, FillRow, MarketRow, PortfolioSnapshotRow, RoundRow
from arena.engine.sources import open_source
from arena.scheduling.jobs import job_specs
from arena.scheduling.runs import run_once
from arena.settings import Settings
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market

START = datetime(2026, 8, 21, tzinfo=UTC)
JOBS = job_specs(Settings())  # the default cadences


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePolymarket]:
    with FakePolymarket() as venue:
        for i in range(len(REAL_MARKETS)):
            venue.add(real_market(i))
        monkeypatch.setenv("ARENA_GAMMA_URL", venue.url)
        monkeypatch.setenv("ARENA_CLOB_URL", venue.url)
        yield venue


def _count(engine: Engine, table: type, *where: object) -> int:
    with Session(engine) as session:
        return int(session.exec(select(func.count()).select_from(table).where(*where)).one())  # type: ignore[arg-type]


def _launch(engine: Engine, clock: SimulatedClock) -> str:
    config = parse_config(
        {
            "name": "live-test",
            "mode": "live",
            "venue": "polymarket",
            "start": START.isoformat(),
            "schedule": {"every": "1d", "rounds": 3},
            "agents": [{"name": "fav", "kind": "favorite"}, {"name": "mkt", "kind": "market"}],
        }
    )
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def test_no_live_cohort_means_nothing_to_sync(engine: Engine, fake: FakePolymarket) -> None:
    assert run_once(JOBS["sync"], engine, SimulatedClock(START))
    assert _count(engine, MarketRow) == 0


def test_sync_then_rounds_catch_up_then_marks(engine: Engine, fake: FakePolymarket) -> None:
    clock = SimulatedClock(START)
    cohort = _launch(engine, clock)
    assert run_once(JOBS["sync"], engine, clock)
    synced = _count(engine, MarketRow)
    assert 0 < synced <= len(REAL_MARKETS)  # the default filters drop decided and far-off markets

    clock.advance(timedelta(minutes=1))  # snapshots are stamped when read: round 0 sees them
    assert run_once(JOBS["rounds"], engine, clock)
    assert _count(engine, RoundRow, RoundRow.cohort_id == cohort) == 1
    assert _count(engine, DecisionRow, DecisionRow.cohort_id == cohort) == 2
    bets = _count(engine, FillRow, FillRow.kind == "buy")
    assert bets > 0  # favorite bet on the synced prices

    # The server is down for two days: the next rounds run catches both missed rounds up.
    clock.advance(timedelta(days=2))
    assert run_once(JOBS["sync"], engine, clock)
    assert run_once(JOBS["rounds"], engine, clock)
    with Session(engine) as session:
        done = session.exec(select(RoundRow.round_index).where(RoundRow.cohort_id == cohort)).all()
    assert sorted(done) == [0, 1, 2]
    assert run_once(JOBS["rounds"], engine, clock) is False  # same minute: claimed already

    assert run_once(JOBS["marks"], engine, clock)
    assert _count(engine, PortfolioSnapshotRow, PortfolioSnapshotRow.cohort_id == cohort) >= 2
