"""Decision units in one process: a round planned as one unit per agent and run by a ``Worker``
(in a thread) ends exactly as the in-process round; a unit's commit is fenced by its lease."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.clock import SystemClock
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import DecisionRow, RoundRow, WorkUnitRow
from arena.engine.claims import new_token
from arena.engine.replay import ReplayRunner
from arena.engine.rounds import decide_one, open_planned_round, round_time
from arena.workers import queue
from arena.workers.planner import RoundUnfinished, plan_round
from arena.workers.queue import UnitFence, UnitLost
from arena.workers.settings import WorkerSettings
from arena.workers.worker import Worker
from tests.engine.helpers import config, launch_cohort, replay, runtime, synthetic_dataset
from tests.engine.ledger_log import assert_ledgers_reconcile, ledger_log
from tests.workers import ON_POSTGRES

pytestmark = ON_POSTGRES
AGENTS = [{"name": k, "kind": k} for k in ("random", "favorite", "contrarian", "kelly", "crowd", "hold")]
TTL = timedelta(seconds=5)


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


def test_a_unit_whose_lease_was_taken_over_cannot_commit(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = launch_cohort(engine, _data(synthetic_dataset(tmp_path / "data", days=20)))
    rt = runtime(engine, cohort_id, source)
    at = round_time(rt.start, rt.config.schedule.every, 0)
    open_planned_round(rt, 0, at)
    favorite = next(s.id for s in rt.agents if s.name == "favorite")
    now = datetime.now(UTC)
    queue.enqueue_decisions(engine, cohort_id, 0, [favorite], now)
    old = queue.take(engine, "paused", now, TTL)
    assert old is not None and old.agent_id == favorite
    new = queue.take(engine, "taker", now + TTL * 2, TTL)  # the paused worker's lease expired
    assert new is not None and new.unit_id == old.unit_id
    late = type(rt)(**{**rt.__dict__, "engine": UnitFence(old).guard(engine), "lease": TTL})
    with pytest.raises(UnitLost, match="commit is refused"):
        asyncio.run(decide_one(late, 0, at, favorite, new_token()))
    with Session(engine) as session:  # the refused transaction left nothing: not even the claim
        assert session.exec(select(DecisionRow)).all() == []
    taker = type(rt)(**{**rt.__dict__, "engine": UnitFence(new).guard(engine), "lease": TTL})
    assert asyncio.run(decide_one(taker, 0, at, favorite, new_token())) == "done"


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
