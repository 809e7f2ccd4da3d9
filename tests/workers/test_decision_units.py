"""Decision units in one process: a round planned as one unit per agent and run by a ``Worker``
(in a thread) ends exactly as the in-process round; a unit's commit is fenced by its lease."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock, SystemClock
from arena.core.settings import Settings
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import DecisionRow, JobRunRow, RoundRow, WorkUnitRow
from arena.engine.live.jobs import RoundUnfinished
from arena.engine.replay.runner import ReplayRunner
from arena.engine.rounds.run import round_time
from arena.engine.rounds.unit_decision import decide_one, open_planned_round
from arena.engine.runtime.sources import open_source
from arena.engine.store.claims import new_token
from arena.scheduling.jobs import job_specs
from arena.scheduling.planner import plan_round
from arena.scheduling.runs import run_once
from arena.workers import queue, roster
from arena.workers.fence import CommitRefused, UnitFence
from arena.workers.settings import WorkerSettings
from arena.workers.worker import Worker
from tests.engine.helpers import config, launch_cohort, replay, runtime, synthetic_dataset
from tests.engine.ledger_log import assert_ledgers_reconcile, ledger_log
from tests.fakes.polymarket_server import FakePolymarket
from tests.workers import ON_POSTGRES

pytestmark = ON_POSTGRES
AGENTS = [{"name": k, "kind": k} for k in ("random", "favorite", "contrarian", "kelly", "crowd", "hold")]
TTL = timedelta(seconds=5)
JOBS = job_specs(Settings())


def _data(dataset: Path) -> dict[str, object]:
    return config(dataset, AGENTS, schedule={"every": "3d", "rounds": 5}, seed=11)


@pytest.fixture
def worker(engine: Engine) -> Iterator[Worker]:
    """A worker running in a thread of this process until the test ends."""
    settings = WorkerSettings(lease_ttl=TTL, poll=timedelta(seconds=0.05))
    lines: list[str] = []
    running = Worker(engine, clock=SystemClock(), settings=settings, environ={}, say=lines.append)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    yield running
    running.stop()
    thread.join(timeout=30)


def test_a_replay_whose_rounds_are_planned_for_workers_matches_the_in_process_run(
    engine: Engine, worker: Worker, tmp_path: Path
) -> None:
    dataset = synthetic_dataset(tmp_path / "data", days=20)
    reference = make_engine(f"sqlite:///{tmp_path / 'reference.db'}")
    upgrade(reference)
    _, ref_rt = replay(reference, _data(dataset))
    cohort_id, source = launch_cohort(engine, _data(dataset))
    result = asyncio.run(ReplayRunner(runtime(engine, cohort_id, source), round_runner=plan_round).run())
    assert result.completed and [r.status for r in result.rounds] == ["done"] * 5
    got, want = ledger_log(engine, cohort_id), ledger_log(reference, ref_rt.cohort_id)
    assert got["fills"] and got == want
    assert_ledgers_reconcile(engine, cohort_id)
    with Session(engine) as session:
        units = session.exec(select(WorkUnitRow)).all()
    assert len(units) == 5 * len(AGENTS)
    assert {(u.kind, u.state, u.attempts) for u in units} == {("decision", "done", 1)}
    url = engine.url.render_as_string(hide_password=False)
    status = CliRunner().invoke(app, ["status"], env={"ARENA_DATABASE_URL": url, "COLUMNS": "200"})
    assert "Decision units" in status.output, status.output
    lines = [line for line in status.output.splitlines() if cohort_id in line]
    counts = [line.split()[2:6] for line in lines]  # cohort, round, then the states
    assert counts == [["0", "0", "6", "0"]] * 5, lines  # queued, running, done, failed


def test_a_unit_whose_lease_was_taken_over_cannot_commit(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = launch_cohort(engine, _data(synthetic_dataset(tmp_path / "data", days=20)))
    rt = runtime(engine, cohort_id, source)
    at = round_time(rt.start, rt.config.schedule.every, 0)
    opened = open_planned_round(rt, 0, at)
    favorite = next(s.id for s in rt.agents if s.name == "favorite")
    now = datetime.now(UTC)
    queue.enqueue_decisions(engine, cohort_id, 0, [favorite], now)
    old = queue.take(engine, "paused", now, TTL)
    assert old is not None and old.agent_id == favorite
    new = queue.take(engine, "taker", now + TTL * 2, TTL)  # the paused worker's lease expired
    assert new is not None and new.unit_id == old.unit_id
    late = replace(rt, engine=UnitFence(old).guard(engine), lease=TTL)
    with pytest.raises(CommitRefused, match="commit is refused"):
        asyncio.run(decide_one(late, opened, favorite, new_token()))
    with Session(engine) as session:  # the refused transaction left nothing: not even the claim
        assert session.exec(select(DecisionRow)).all() == []
    taker = replace(rt, engine=UnitFence(new).guard(engine), lease=TTL)
    assert asyncio.run(decide_one(taker, opened, favorite, new_token())) == "done"


def test_a_planner_without_workers_gives_up_at_its_bound_and_says_which_decisions(
    engine: Engine, tmp_path: Path
) -> None:
    cohort_id, source = launch_cohort(engine, _data(synthetic_dataset(tmp_path / "data", days=20)))
    rt = runtime(engine, cohort_id, source)
    at = round_time(rt.start, rt.config.schedule.every, 0)
    with pytest.raises(RoundUnfinished, match=r"5 of 5 decisions not final .*random: unit \d+ queued"):
        asyncio.run(plan_round(rt, 0, at, bound=timedelta(seconds=0.3)))
    with Session(engine) as session:
        (status,) = session.exec(select(RoundRow.status)).all()
        units = session.exec(select(WorkUnitRow).order_by(col(WorkUnitRow.id))).all()
    assert status == "running" and len(units) == 5  # the ensemble waits for the first phase
    with pytest.raises(RoundUnfinished):  # planned again: the same units, not new ones
        asyncio.run(plan_round(rt, 0, at, bound=timedelta(seconds=0.1)))
    with Session(engine) as session:
        assert len(session.exec(select(WorkUnitRow)).all()) == 5


def _live(engine: Engine, name: str, start: datetime) -> str:
    agents = [
        {"name": "fav", "kind": "favorite"},
        {"name": "mkt", "kind": "market"},
        {"name": "crowd", "kind": "crowd"},
    ]
    cfg = parse_config(
        {
            "name": name,
            "mode": "live",
            "venue": "polymarket",
            "start": start.isoformat(),
            "schedule": {"every": "1d", "rounds": 2},
            "tournament": {"hidden_fraction": 0},  # every round shows prices: the agents bet
            "agents": agents,
        }
    )
    clock = SimulatedClock(start)
    return launch(engine, cfg, source=open_source(cfg, engine), environ={}, clock=clock).cohort_id


def _job_message(engine: Engine, job: str) -> str:
    with Session(engine) as session:
        row = session.exec(
            select(JobRunRow).where(JobRunRow.job == job).order_by(col(JobRunRow.id).desc())
        ).first()
    assert row is not None and row.ok, row
    return row.message


def test_the_rounds_job_plans_for_live_workers_and_runs_in_process_without_them(
    engine: Engine, venue: FakePolymarket, worker: Worker
) -> None:
    start = datetime.now(UTC).replace(microsecond=0)
    clock = SimulatedClock(start)
    # Round 0 after the sync: the worker's sync unit stores its prices at the (real) time it ran.
    planned = _live(engine, "planned", start + timedelta(seconds=30))
    assert run_once(JOBS["sync"], engine, clock)  # handed to the idle worker as a sync unit
    _wait_for(lambda: [u.state for u in _units(engine, queue.SYNC)] == [queue.DONE])
    clock.advance(timedelta(minutes=1))
    assert run_once(JOBS["rounds"], engine, clock)
    assert _job_message(engine, "rounds") == "1 rounds run by workers"
    worker.stop()  # the worker leaves the roster: the next round runs in this process
    _wait_for(lambda: roster.live_workers(engine, datetime.now(UTC)) == 0)
    alone = _live(engine, "alone", start + timedelta(seconds=30))
    clock.advance(timedelta(minutes=1))
    assert run_once(JOBS["rounds"], engine, clock)
    assert _job_message(engine, "rounds") == "1 rounds run"  # the "alone" cohort's round 0
    got, want = ledger_log(engine, planned), ledger_log(engine, alone)
    # the same fills but for their times: live, a fill is stamped when it executed
    assert got["fills"] and [f[:-1] for f in got["fills"]] == [f[:-1] for f in want["fills"]]
    assert got["decisions"] == want["decisions"]
    units = _units(engine, queue.DECISION)
    with Session(engine) as session:
        statuses = session.exec(select(RoundRow.cohort_id, RoundRow.status)).all()
    assert sorted(statuses) == sorted([(planned, "done"), (alone, "done")])
    assert len(units) == 3 and {u.cohort_id for u in units} == {planned}
    assert {(u.state, u.attempts) for u in units} == {("done", 1)}


def _units(engine: Engine, kind: str) -> list[WorkUnitRow]:
    with Session(engine) as session:
        return list(session.exec(select(WorkUnitRow).where(WorkUnitRow.kind == kind)))


def _wait_for(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60  # generous: a loaded CI machine runs the worker thread slowly
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
