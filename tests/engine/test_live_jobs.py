"""Live cohorts: the jobs `arena serve` schedules, on markets stored as the live sync stores them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db.engine import session_scope
from arena.db.market_rows import (
    market_row,
    resolution_row,
    snapshot_row,
    write_markets,
    write_resolutions,
    write_snapshots,
)
from arena.db.market_source import DbMarketSource
from arena.db.models import CohortRow, FillRow, PortfolioSnapshotRow, RoundRow
from arena.engine.live.jobs import (
    JobFailure,
    awaiting_resolutions,
    completion_job,
    marks_job,
    rounds_job,
    settlement_job,
)
from arena.engine.live.venue_sync import live_venues
from markets.polymarket.clob import CLOB_MID_SOURCE
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue
from tests.engine.helpers import frozen_parses

D = Decimal
T0 = datetime(2026, 3, 2, tzinfo=UTC)
M1, M2 = "polymarket:lv1", "polymarket:lv2"


def _sync(engine: Engine, at: datetime, prices: dict[str, str]) -> None:
    """What `arena markets sync` leaves behind: market rows and accounting (CLOB mid) snapshots."""
    markets = [
        Market(Venue.POLYMARKET, m.split(":")[1], f"{m}?", close_time=T0 + timedelta(days=30)) for m in prices
    ]
    snaps = [PriceSnapshot(m, {"YES": D(p), "NO": 1 - D(p)}, at, CLOB_MID_SOURCE) for m, p in prices.items()]
    with session_scope(engine) as session:
        write_markets(session, [market_row(m, {}, at) for m in markets])
        write_snapshots(session, [snapshot_row(s, None) for s in snaps])


def _launch(engine: Engine, tmp_path: Path, agents: list[dict[str, object]]) -> str:
    config = parse_config(
        {
            "name": "live",
            "mode": "live",
            "venue": "polymarket",
            "start": T0,
            "schedule": {"every": "1d", "rounds": 2},
            "marks": {"every": "1h"},
            "agents": agents,
        }
    )
    source = DbMarketSource(engine, venues=(Venue.POLYMARKET,))
    return launch(
        engine, config, source=source, environ={}, clock=SimulatedClock(T0 - timedelta(hours=2))
    ).cohort_id


def test_a_live_cohort_from_first_round_to_completion(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [{"time": T0.isoformat(), "market_id": M1, "outcome": "YES", "amount": 400}]
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    cohort_id = _launch(
        engine,
        tmp_path,
        [{"name": "alice", "kind": "scripted", "path": str(path)}, {"name": "h", "kind": "hold"}],
    )
    _sync(engine, T0 - timedelta(minutes=30), {M1: "0.40", M2: "0.70"})
    clock = SimulatedClock(T0 + timedelta(minutes=1))
    parses = frozen_parses(monkeypatch)
    assert rounds_job(engine, clock, environ={}) == "1 rounds run"
    assert len(parses) == 1  # one cohort, its frozen config parsed once for the whole job
    assert rounds_job(engine, clock, environ={}) == "0 rounds run"  # the next minute: nothing due
    assert marks_job(engine, clock, environ={}) == "2 portfolios marked"
    assert marks_job(engine, clock, environ={}) == "0 portfolios marked"  # same hour bucket
    clock.set(T0 + timedelta(hours=5))
    _sync(engine, T0 + timedelta(hours=4), {M1: "0.50", M2: "0.70"})
    marks_job(engine, clock, environ={})
    with Session(engine) as session:
        marks = session.exec(select(PortfolioSnapshotRow).order_by(PortfolioSnapshotRow.marked_at)).all()  # type: ignore[arg-type]
    alice = [m for m in marks if m.cash != D(10000)]
    assert [(m.cash, m.positions_value) for m in alice] == [
        (D(9600), D(400)),
        (D(9600), D(500)),
    ]  # 1,000 shares

    # Resolution detected by the sync; the settlement job pays it, completion waits for round 2.
    with session_scope(engine) as session:
        win = Resolution.binary(M1, ResolutionKind.YES, T0 + timedelta(hours=20), "polymarket")
        write_resolutions(session, [resolution_row(win, T0 + timedelta(hours=21), None)])
    clock.set(T0 + timedelta(hours=22))
    assert settlement_job(engine, clock, environ={}) == "1 positions settled"
    assert completion_job(engine, clock, environ={}) == "0 cohorts completed"
    clock.set(T0 + timedelta(days=1, minutes=1))
    _sync(engine, T0 + timedelta(days=1) - timedelta(minutes=5), {M2: "0.65"})
    assert rounds_job(engine, clock, environ={}) == "1 rounds run"
    assert completion_job(engine, clock, environ={}) == "1 cohorts completed"
    with Session(engine) as session:
        settle = session.exec(select(FillRow).where(FillRow.kind == "settle")).one()
        assert session.get(CohortRow, cohort_id).status == "completed"  # type: ignore[union-attr]
        assert [r.status for r in session.exec(select(RoundRow)).all()] == ["done", "done"]
    assert (settle.amount, settle.filled_at) == (D(1000), T0 + timedelta(hours=22))

    # Completed, but M2 (offered in both rounds, held by nobody) is unresolved: the sync keeps
    # its venue current so stated forecasts on it get scored, until it resolves.
    assert awaiting_resolutions(engine) == [cohort_id]
    assert live_venues(engine) == [Venue.POLYMARKET]
    with session_scope(engine) as session:
        no = Resolution.binary(M2, ResolutionKind.NO, T0 + timedelta(days=3), "polymarket")
        write_resolutions(session, [resolution_row(no, T0 + timedelta(days=3), None)])
    assert (awaiting_resolutions(engine), live_venues(engine)) == ([], [])


def test_a_live_round_where_every_agent_fails_fails_the_job(engine: Engine, tmp_path: Path) -> None:
    _launch(engine, tmp_path, [{"name": "f", "kind": "plugin", "path": "tests.engine.bots:FailingBettor"}])
    _sync(engine, T0 - timedelta(minutes=30), {M1: "0.40"})
    with pytest.raises(JobFailure, match=r"every agent failed in: live-.* round 0"):
        rounds_job(engine, SimulatedClock(T0 + timedelta(minutes=1)), environ={})


def test_a_live_cohort_starts_on_a_calendar_boundary(engine: Engine) -> None:
    config = parse_config(
        {
            "name": "x",
            "mode": "live",
            "venue": "polymarket",
            "schedule": {"rounds": 1},
            "agents": [{"name": "h", "kind": "hold"}],
        }
    )
    launched = launch(
        engine,
        config,
        source=DbMarketSource(engine),
        environ={},
        clock=SimulatedClock(datetime(2026, 3, 4, 15, 7, tzinfo=UTC)),
    )
    assert launched.config.start == datetime(2026, 3, 5, tzinfo=UTC)
