"""Recorded data replays to the end: a resolution after the last mark instant is still reached.

Data recorded with ``arena markets record`` has prices and resolutions at arbitrary times of day,
so the last resolution often falls after the last step of the daily mark grid. The replay must
still reach it, settle it and complete the cohort; when something is really left open, the run's
summary counts it (not only the positions old enough to be called stale).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.core.clock import SimulatedClock
from arena.db.models import AgentRow, CohortRow, JobRunRow, PositionRow
from arena.engine.replay.runner import replay_cohort
from markets.replay import DatasetInfo, write_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue
from tests.engine.helpers import A, config, day, launch_cohort, script

AFTERNOON = timedelta(hours=15)


def _recorded_like(directory: Path, *, resolved: bool) -> Path:
    """One market priced at midnight on days 0-2 that resolves YES on day 2 at 15:00 UTC, after
    the last midnight (``resolved=False``: the data holds no resolution at all)."""
    market = Market(venue=Venue.POLYMARKET, venue_id="a", question="Will A happen?", volume=Decimal(1000))
    prices = [
        PriceSnapshot(A, {"YES": Decimal(p), "NO": 1 - Decimal(p)}, day(d), "test")
        for d, p in ((0, "0.40"), (1, "0.50"), (2, "0.60"))
    ]
    resolutions = [Resolution.binary(A, ResolutionKind.YES, day(2) + AFTERNOON, "test")] if resolved else []
    info = DatasetInfo(
        name="rec", version="1", source="handmade for tests", license="CC0", created_with="tests"
    )
    write_dataset(directory, markets=[market], prices=prices, resolutions=resolutions, info=info)
    return directory


def _replay(engine: Engine, tmp_path: Path, *, resolved: bool) -> tuple[str, JobRunRow]:
    bets = [{"time": day(0).isoformat(), "market_id": A, "outcome": "YES", "amount": 100}]
    agent = {"name": "alice", "kind": "scripted", "path": str(script(tmp_path / "alice.jsonl", bets))}
    data = config(_recorded_like(tmp_path / "data", resolved=resolved), [agent], schedule={"every": "1d"})
    cohort_id, source = launch_cohort(engine, data)
    asyncio.run(replay_cohort(engine, cohort_id, source, environ={}, wall_clock=SimulatedClock(day(400))))
    with Session(engine) as session:
        run = session.exec(select(JobRunRow).where(JobRunRow.job == "replay")).one()
    return cohort_id, run


def _open_positions(engine: Engine, cohort_id: str) -> int:
    with Session(engine) as session:
        rows = session.exec(
            select(PositionRow)
            .join(AgentRow, col(AgentRow.id) == col(PositionRow.agent_id))
            .where(AgentRow.cohort_id == cohort_id, col(PositionRow.status) == "open")
        ).all()
    return len(rows)


def test_a_resolution_after_the_last_mark_instant_is_settled_and_the_cohort_completes(
    engine: Engine, tmp_path: Path
) -> None:
    cohort_id, run = _replay(engine, tmp_path, resolved=True)
    with Session(engine) as session:
        cohort = session.get(CohortRow, cohort_id)
        assert cohort is not None
        assert cohort.status == "completed", run.message
    assert _open_positions(engine, cohort_id) == 0
    assert run.message.endswith("completed")


def test_positions_the_data_never_resolves_are_counted_as_open_in_the_summary(
    engine: Engine, tmp_path: Path
) -> None:
    cohort_id, run = _replay(engine, tmp_path, resolved=False)
    assert _open_positions(engine, cohort_id) == 1
    assert "1 positions still open" in run.message, run.message
