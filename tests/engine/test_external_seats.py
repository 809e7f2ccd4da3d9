"""An external forecaster seated in a cohort is never run: rounds, marks and completion ignore it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.cohorts.external_seats import seat_external
from arena.cohorts.forecast_file import FileRow, import_forecasts
from arena.core.clock import SimulatedClock
from arena.db.engine import session_scope
from arena.db.models import DecisionRow, PortfolioSnapshotRow
from arena.engine.replay.runner import ReplayRunner
from arena.scoring import leaderboard, load_frames
from tests.engine.helpers import A, config, day, launch_cohort, runtime, tiny_dataset


def test_a_replay_runs_around_an_external_seat_and_scores_it_beside_the_agents(
    engine: Engine, tmp_path: Path
) -> None:
    cohort_id, source = launch_cohort(
        engine, config(tiny_dataset(tmp_path / "data"), [{"name": "holder", "kind": "hold"}])
    )
    with session_scope(engine) as session:
        panel = seat_external(session, cohort_id, "panel", {"source": "lab"}, day(0))
    rt = runtime(engine, cohort_id, source)
    assert [slot.name for slot in rt.agents] == ["holder"]  # the external seat holds no book
    assert asyncio.run(ReplayRunner(rt).run()).completed
    with Session(engine) as session:
        for table in (DecisionRow, PortfolioSnapshotRow):
            assert not session.exec(select(table).where(table.agent_id == panel)).all()
    # After the run, the panel's forecast on A (offered on day 0, YES on day 19) joins the scores.
    rows = [FileRow(1, "panel", A, day(1), 0.8, None)]
    import_forecasts(engine, cohort_id, rows, source="lab.csv", clock=SimulatedClock(day(30)))
    table = leaderboard(load_frames(engine, [cohort_id]), by="stated_brier", replicates=20)
    first = table.row(0, named=True)
    assert (first["agent"], first["external"], first["stated_events"]) == ("panel", True, 1)
    assert abs(first["stated_brier"] - 0.04) < 1e-12  # (0.8 − 1)²
