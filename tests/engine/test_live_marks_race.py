"""The marks job meets a settlement committed while it marked: it reads the new fills and marks
again, instead of failing the job (``arena status`` would report a failure that was none)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

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
from arena.db.models import PortfolioSnapshotRow
from arena.engine.live import jobs
from markets.polymarket.clob import CLOB_MID_SOURCE
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue

T0 = datetime(2026, 3, 2, tzinfo=UTC)
M1 = "polymarket:race"


def test_a_settlement_between_load_and_commit_is_marked_not_failed(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    market = Market(Venue.POLYMARKET, "race", "Race?", close_time=T0 + timedelta(days=30))
    snap = PriceSnapshot(
        M1, {"YES": Decimal("0.40"), "NO": Decimal("0.60")}, T0 - timedelta(minutes=5), CLOB_MID_SOURCE
    )
    with session_scope(engine) as session:
        write_markets(session, [market_row(market, {}, T0)])
        write_snapshots(session, [snapshot_row(snap, None)])
    script = tmp_path / "a.jsonl"
    script.write_text(json.dumps({"time": T0.isoformat(), "market_id": M1, "outcome": "YES", "amount": 400}))
    config = parse_config(
        {
            "name": "race",
            "mode": "live",
            "venue": "polymarket",
            "start": T0,
            "schedule": {"every": "1d", "rounds": 2},
            "marks": {"every": "1h"},
            "agents": [{"name": "alice", "kind": "scripted", "path": str(script)}],
        }
    )
    cohort = launch(
        engine, config, source=DbMarketSource(engine), environ={}, clock=SimulatedClock(T0)
    ).cohort_id
    clock = SimulatedClock(T0 + timedelta(minutes=1))
    jobs.rounds_job(engine, clock, environ={})  # alice holds 1,000 YES shares at 0.40
    with session_scope(engine) as session:
        win = Resolution.binary(M1, ResolutionKind.YES, T0 + timedelta(hours=2), "polymarket")
        write_resolutions(session, [resolution_row(win, T0 + timedelta(hours=2), None)])
    clock.set(T0 + timedelta(hours=3))
    real, calls = jobs.unmarked_agents, []

    def settle_meanwhile(session: Session, rt: Any, at: datetime) -> Any:
        calls.append(at)
        if len(calls) == 1:  # the marks job has loaded its ledgers; a settlement commits now
            assert jobs.settle_cohort(engine, cohort, clock, environ={})[0] == 1
        return real(session, rt, at)

    monkeypatch.setattr(jobs, "unmarked_agents", settle_meanwhile)
    assert jobs.mark_cohort(engine, cohort, clock, environ={}) == 1
    assert len(calls) == 2  # refused once by the ledger fence, then marked from the new fills
    with Session(engine) as session:
        mark = session.exec(
            select(PortfolioSnapshotRow).order_by(col(PortfolioSnapshotRow.marked_at).desc())
        ).first()
    assert mark is not None and (mark.cash, mark.positions_value) == (Decimal(10600), Decimal(0))
