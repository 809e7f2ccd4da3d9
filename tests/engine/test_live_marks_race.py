"""The marks job meets a settlement committed while it marked: it reads the new fills and marks
again, instead of failing the job (``arena status`` would report a failure that was none)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.core.clock import SimulatedClock
from arena.db.models import PortfolioSnapshotRow
from arena.engine.live import jobs
from markets.types import ResolutionKind
from tests.engine.live_world import launch_live, resolve, scripted_bets, store_market

T0 = datetime(2026, 3, 2, tzinfo=UTC)
M1 = "polymarket:race"


def test_a_settlement_between_load_and_commit_is_marked_not_failed(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_market(engine, M1, T0 + timedelta(days=30), [(T0 - timedelta(minutes=5), "0.40")])
    alice = scripted_bets(tmp_path / "a.jsonl", (T0, M1, 400))
    cohort = launch_live(engine, T0, [alice], marks={"every": "1h"})
    clock = SimulatedClock(T0 + timedelta(minutes=1))
    jobs.rounds_job(engine, clock, environ={})  # alice holds 1,000 YES shares at 0.40
    resolve(engine, M1, ResolutionKind.YES, T0 + timedelta(hours=2))
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
