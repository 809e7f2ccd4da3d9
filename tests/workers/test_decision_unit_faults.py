"""Decision units under faults, with real processes on PostgreSQL: the planner (``arena replay
--by-workers``, or ``arena serve`` for a live cohort), ``arena worker`` processes, and LLM agents
whose provider (a fake on loopback) answers after a delay, so units are in flight when a worker
is killed or paused, or the leader killed. A disturbed replay must end exactly as an undisturbed
in-process ``arena replay`` of the same config: the same fills, marks and decisions, one decision
per agent per round, every ledger equal to its fill log. The live run (real time, so no twin run
to compare with) must end with every round done, each unit run once, and ledgers reconciled.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db import leases
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import JobRunRow, RoundRow, WorkUnitRow
from arena.engine.runtime.sources import open_source
from tests.engine.helpers import synthetic_dataset
from tests.engine.ledger_log import assert_ledgers_reconcile
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market
from tests.workers import ON_POSTGRES
from tests.workers.compare import cohort_named, reference, same_as_reference
from tests.workers.llm_study import SlowProvider, llm_study_config, start, start_worker, stop

pytestmark = [ON_POSTGRES, pytest.mark.slow]
TIMEOUT = 180


@pytest.fixture
def pg(db_url: str) -> Engine:
    upgrade(db_url)
    return make_engine(db_url)


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.responder = SlowProvider(1.5)
        yield server


def _units(engine: Engine) -> list[WorkUnitRow]:
    """The decision units (``arena serve`` also hands its sync and marks to idle workers)."""
    with Session(engine) as session:
        query = select(WorkUnitRow).where(WorkUnitRow.kind == "decision")
        return list(session.exec(query.order_by(col(WorkUnitRow.id))))


def _wait(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _llm_units_running(engine: Engine, owner_pid: int, round_index: int) -> bool:
    """Units of ``round_index`` leased by the worker of ``owner_pid`` whose decision is not in yet."""
    return any(
        u.state == "running" and u.round_index == round_index and f":{owner_pid}:" in (u.lease_owner or "")
        for u in _units(engine)
    )


def _planner(db_url: str, config: Path, log: Path) -> subprocess.Popen[bytes]:
    return start("replay", str(config), "--by-workers", "--database-url", db_url, log=log)


def _finished(proc: subprocess.Popen[bytes], log: Path) -> str:
    proc.wait(timeout=TIMEOUT)
    out = log.read_text()
    assert proc.returncode == 0, out[-3000:]
    return out


def test_a_killed_workers_decision_units_are_taken_over_and_run_once(
    pg: Engine, db_url: str, provider: FakeOpenAIServer, tmp_path: Path
) -> None:
    config = llm_study_config(
        tmp_path / "k.toml", synthetic_dataset(tmp_path / "data", days=16), provider.base_url, name="k"
    )
    undisturbed = reference(tmp_path, config, "k")
    planner = _planner(db_url, config, tmp_path / "planner.log")
    first = start_worker(db_url, tmp_path / "first.log")
    second = None
    try:
        _wait(lambda: _llm_units_running(pg, first.pid, 1), "the first worker's units of round 1")
        first.send_signal(signal.SIGKILL)
        first.wait()
        second = start_worker(db_url, tmp_path / "second.log")
        _finished(planner, tmp_path / "planner.log")
    finally:
        for proc in (planner, first, second):
            if proc is not None:
                stop(proc)
    taken_over = [u for u in _units(pg) if u.attempts == 2]
    assert taken_over and all(u.round_index == 1 for u in taken_over)
    assert {(u.state, u.attempts) for u in _units(pg)} <= {("done", 1), ("done", 2)}
    assert "took unit" in (tmp_path / "second.log").read_text()
    same_as_reference(pg, cohort_named(pg, "k"), undisturbed)


def test_a_paused_workers_late_commit_is_refused_by_fencing(
    pg: Engine, db_url: str, provider: FakeOpenAIServer, tmp_path: Path
) -> None:
    config = llm_study_config(
        tmp_path / "p.toml", synthetic_dataset(tmp_path / "data", days=16), provider.base_url, name="p"
    )
    undisturbed = reference(tmp_path, config, "p")
    planner = _planner(db_url, config, tmp_path / "planner.log")
    paused = start_worker(db_url, tmp_path / "paused.log")
    taker = None
    try:
        _wait(lambda: _llm_units_running(pg, paused.pid, 1), "the first worker's units of round 1")
        paused.send_signal(signal.SIGSTOP)
        taker = start_worker(db_url, tmp_path / "taker.log")
        _wait(
            lambda: any(u.attempts == 2 and u.state == "done" for u in _units(pg)),
            "a paused worker's unit finished by the taker",
        )
        paused.send_signal(signal.SIGCONT)  # wakes holding answers for units it no longer holds
        _finished(planner, tmp_path / "planner.log")
        time.sleep(1)  # let the woken worker reach its renewal or its commit
    finally:
        for proc in (planner, paused, taker):
            if proc is not None:
                stop(proc)
    late = (tmp_path / "paused.log").read_text()
    woke = ("refused: unit", "lost the lease of unit", "connection lost while running unit")
    assert any(line in late for line in woke), late[-3000:]
    assert {(u.state, u.attempts) for u in _units(pg)} <= {("done", 1), ("done", 2)}
    same_as_reference(pg, cohort_named(pg, "p"), undisturbed)


@pytest.fixture
def venue() -> Iterator[FakePolymarket]:
    with FakePolymarket() as fake:
        for i in range(len(REAL_MARKETS)):
            fake.add(real_market(i))
        yield fake


def _launch_live(engine: Engine, base_url: str, start_at: datetime) -> str:
    """A live cohort of two baselines and two slow LLM agents, a round every 15 s from ``start_at``."""
    llm = {"kind": "llm", "model": "fake/model", "base_url": base_url, "api_key_env": "", "timeout_s": 30}
    llm["knowledge_cutoff"] = "2024-12-01"
    agents = [{"name": "fav", "kind": "favorite"}, {"name": "mkt", "kind": "market"}]
    agents += [{"name": f"llm-{i}", **llm} for i in range(2)]
    config = parse_config(
        {
            "name": "leader",
            "mode": "live",
            "venue": "polymarket",
            "start": start_at.isoformat(),
            "schedule": {"every": "15s", "rounds": 3},
            "tournament": {"hidden_fraction": 0},  # every round shows prices: the agents bet
            "call_timeout": "20s",
            "round_budget": "40s",
            "agents": agents,
        }
    )
    clock = SimulatedClock(start_at)
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def _round_statuses(engine: Engine, cohort: str) -> dict[int, str]:
    with Session(engine) as session:
        rows = session.exec(select(RoundRow).where(RoundRow.cohort_id == cohort)).all()
    return {r.round_index: r.status for r in rows}


def test_a_standby_plans_the_next_rounds_after_the_leader_is_killed_mid_round(
    pg: Engine, db_url: str, venue: FakePolymarket, tmp_path: Path
) -> None:
    with FakeOpenAIServer() as provider:
        provider.responder = SlowProvider(3.0, hold=True)
        # Round 0 is due once the leader's start-up sync has stored prices, even on a loaded machine.
        cohort = _launch_live(pg, provider.base_url, datetime.now(UTC) + timedelta(seconds=10))
        env = {
            "ARENA_DATABASE_URL": db_url,
            "ARENA_GAMMA_URL": venue.url,
            "ARENA_CLOB_URL": venue.url,
            "ARENA_LEADER_LEASE": "3s",
            "ARENA_ROUNDS_EVERY": "1s",
            "ARENA_SYNC_EVERY": "5s",
        }
        # Leases long enough that no unit changes hands on a loaded machine: none is killed here.
        workers = [start_worker(db_url, tmp_path / f"worker-{i}.log", lease=10, env=env) for i in range(2)]
        leader = start("serve", "--poll", "0.3", log=tmp_path / "leader.log", env=env)
        standby = None
        try:
            _wait(lambda: leases.holder(pg) is not None, "a leader")
            standby = start("serve", "--poll", "0.3", log=tmp_path / "standby.log", env=env)
            _wait(lambda: any(u.state == "running" for u in _units(pg)), "workers running round 0's units")
            leader.send_signal(signal.SIGKILL)
            leader.wait()
            _wait(lambda: _round_statuses(pg, cohort) == {0: "done", 1: "done", 2: "done"}, "three rounds")
        except AssertionError as exc:  # say what the standby was doing
            raise AssertionError(f"{exc}\n{(tmp_path / 'standby.log').read_text()[-3000:]}") from None
        finally:
            for proc in (leader, standby, *workers):
                if proc is not None:
                    stop(proc)
    units = _units(pg)
    with Session(pg) as session:  # the sync and marks units serve handed to the workers meanwhile
        jobs = session.exec(select(WorkUnitRow).where(WorkUnitRow.kind != "decision")).all()
    assert jobs and not [(u.kind, u.error) for u in jobs if u.state == "failed"]
    assert len(units) == 3 * 4  # one per agent per round: none lost, none doubled
    # Each ran once, on its first lease.
    assert {(u.state, u.attempts) for u in units} == {("done", 1)}, [
        (u.id, u.state, u.attempts, u.error) for u in units
    ]
    assert_ledgers_reconcile(pg, cohort)  # one decision per agent per round, ledgers = fill logs
    with Session(pg) as session:
        runs = session.exec(select(JobRunRow.message).where(JobRunRow.job == "rounds")).all()
    assert any("by workers" in (m or "") for m in runs)
    assert "leader; starting the scheduler" in (tmp_path / "standby.log").read_text()
