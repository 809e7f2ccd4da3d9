"""Live jobs as units: ``arena serve`` hands marks (and sync) to a running ``arena worker``, and
a worker's sync unit survives its worker being killed or paused past its lease.

Real processes on PostgreSQL, the fake Polymarket on loopback. The marks a worker writes are
compared with the in-process computation at the same instant; a killed worker's unit is taken
over after its lease (attempt 2); a paused worker, woken after another finished its unit, has its
commit refused and the database holds exactly what the taker stored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock, SystemClock
from arena.core.settings import Settings
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import (
    FillRow,
    JobRunRow,
    MarketRow,
    MarketSnapshotRow,
    PortfolioSnapshotRow,
    PositionRow,
    WorkerRow,
    WorkUnitRow,
)
from arena.engine.books.marks import mark_rows
from arena.engine.runtime.cohort import load_runtime
from arena.engine.runtime.sources import open_source
from arena.scheduling.jobs import job_specs
from arena.scheduling.runs import run_once
from arena.workers import queue
from tests.fakes.polymarket_server import FakePolymarket
from tests.fakes.venue_gate import HoldFirstRequest, move_prices
from tests.workers import ON_POSTGRES
from tests.workers.study import ROOT, start_worker

pytestmark = [ON_POSTGRES, pytest.mark.slow]
TIMEOUT = 120


@pytest.fixture
def pg(db_url: str) -> Iterator[Engine]:
    upgrade(db_url)
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def _launch(engine: Engine, start: datetime) -> str:
    config = parse_config(
        {
            "name": "units",
            "mode": "live",
            "venue": "polymarket",
            "start": start.isoformat(),
            "schedule": {"every": "1d", "rounds": 2},
            "tournament": {"hidden_fraction": 0},  # every round shows prices: favorite bets
            "agents": [{"name": "fav", "kind": "favorite"}, {"name": "mkt", "kind": "market"}],
        }
    )
    clock = SimulatedClock(datetime.now(UTC))
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def _wait(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _units(engine: Engine, kind: str | None = None) -> list[WorkUnitRow]:
    with Session(engine) as session:
        query = select(WorkUnitRow).order_by(col(WorkUnitRow.id))
        return list(session.exec(query if kind is None else query.where(WorkUnitRow.kind == kind)))


def _stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out or ""


def _serve(db_url: str, log: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARENA_DATABASE_URL": db_url}
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--poll", "0.5"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
            text=True,
        )


def _snapshots(engine: Engine, cohort: str) -> list[PortfolioSnapshotRow]:
    with Session(engine) as session:
        query = select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.cohort_id == cohort)
        return list(session.exec(query.order_by(col(PortfolioSnapshotRow.agent_id))))


def test_serve_hands_marks_to_a_running_worker_which_writes_the_in_process_marks(
    pg: Engine, db_url: str, venue: FakePolymarket, tmp_path: Path
) -> None:
    jobs = job_specs(Settings())
    start = datetime.now(UTC) + timedelta(seconds=2)
    cohort = _launch(pg, start)
    assert run_once(jobs["sync"], pg, SystemClock())  # no worker yet: in-process
    _wait(lambda: datetime.now(UTC) > start, "round 0's time")
    assert run_once(jobs["rounds"], pg, SystemClock())  # rounds stay in-process
    with Session(pg) as session:
        assert session.exec(select(func.count()).select_from(FillRow)).one() > 0  # positions to mark
    assert _snapshots(pg, cohort) == [] and _units(pg) == []

    worker = start_worker(db_url, until_idle=False)
    serve = None
    try:
        _wait(lambda: _count(pg, WorkerRow) == 1, "the worker to join")
        serve = _serve(db_url, tmp_path / "serve.log")
        _wait(lambda: [u.state for u in _units(pg, queue.MARKS)] == ["done"], "the marks unit")
        _wait(lambda: _job_message(pg, "marks") is not None, "the marks job's outcome")
    finally:
        served = "" if serve is None else _stop(serve) + (tmp_path / "serve.log").read_text()
        worked = _stop(worker)
    (unit,) = _units(pg, queue.MARKS)
    assert (unit.dedup_key, unit.cohort_id, unit.attempts) == (cohort, cohort, 1)
    assert f"took unit {unit.id}: marks of cohort {cohort}" in worked, worked
    assert f"unit {unit.id} done" in worked and "2 portfolios marked" in worked, worked
    assert _job_message(pg, "marks") == "1 marks unit(s) for workers: 1 done", served[-3000:]
    status = subprocess.run(
        [sys.executable, "-m", "arena.cli", "status", "--database-url", db_url],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    rows = [line.split()[:4] for line in status.stdout.splitlines()]
    listed = [row for row in rows if row[:2] == [str(unit.id), "marks"]]
    assert listed == [[str(unit.id), "marks", cohort, "done"]], status.stdout

    stored = _snapshots(pg, cohort)
    assert len(stored) == 2 and len({s.marked_at for s in stored}) == 1
    at = stored[0].marked_at
    rt = load_runtime(pg, cohort, environ={}, with_bettors=False)  # the same ledgers, in-process
    expected = sorted(mark_rows(rt, at), key=lambda r: int(str(r["agent_id"])))
    assert [{k: getattr(s, k) for k in expected[0]} for s in stored] == expected
    assert any(s.open_positions for s in stored)
    with Session(pg) as session:
        positions = session.exec(select(PositionRow).where(PositionRow.status == "open")).all()
    marks = {(s.id, p.position_id): p.mark for s in rt.agents for p in s.book.ledger.open_positions()}
    assert positions and all(
        marks[(p.agent_id, p.position_id)].price == p.last_price
        for p in positions  # type: ignore[union-attr]
    )


def _count(engine: Engine, table: type) -> int:
    with Session(engine) as session:
        return int(session.exec(select(func.count()).select_from(table)).one())


def _job_message(engine: Engine, job: str) -> str | None:
    with Session(engine) as session:
        query = select(JobRunRow).where(JobRunRow.job == job, col(JobRunRow.finished_at).is_not(None))
        row = session.exec(query.order_by(col(JobRunRow.started_at).desc())).first()
        return None if row is None else row.message


@pytest.fixture
def gate(venue: FakePolymarket) -> Iterator[HoldFirstRequest]:
    hold = HoldFirstRequest()
    venue.after_request = hold
    try:
        yield hold
    finally:
        hold.released.set()


def _stored(engine: Engine) -> tuple[int, int, int]:
    """Price snapshots, markets and the latest market write time (what a sync writes)."""
    with Session(engine) as session:
        snapshots = session.exec(select(func.count()).select_from(MarketSnapshotRow)).one()
        markets, latest = session.exec(select(func.count(), func.max(MarketRow.updated_at))).one()
        return int(snapshots), int(markets), 0 if latest is None else int(latest.timestamp() * 1e6)


def _queue_sync(engine: Engine) -> int:
    _launch(engine, datetime.now(UTC) + timedelta(days=1))  # a live cohort on the venue
    unit, new = queue.enqueue(engine, queue.SYNC, "polymarket", datetime.now(UTC))
    assert new
    return unit


def test_a_killed_workers_sync_unit_is_taken_over_after_its_lease(
    pg: Engine, db_url: str, gate: HoldFirstRequest
) -> None:
    unit = _queue_sync(pg)
    first = start_worker(db_url)
    _wait(gate.held.is_set, "the first worker's sync to reach the venue")
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    assert _stored(pg)[1] == 0  # it stored nothing before it died
    second = start_worker(db_url)
    out = _stop_when_idle(second)
    assert f"took unit {unit}: sync of venue polymarket (attempt 2)" in out, out
    (row,) = _units(pg)
    assert (row.state, row.attempts) == ("done", 2)
    assert _stored(pg)[1] > 0


def test_a_paused_workers_commit_is_refused_after_its_unit_was_taken_over(
    pg: Engine, db_url: str, venue: FakePolymarket, gate: HoldFirstRequest
) -> None:
    unit = _queue_sync(pg)
    paused = start_worker(db_url)
    try:
        _wait(gate.held.is_set, "the first worker's sync to reach the venue")
        paused.send_signal(signal.SIGSTOP)
        taker = start_worker(db_url)
        took = _stop_when_idle(taker)
        assert f"took unit {unit}: sync of venue polymarket (attempt 2)" in took, took
        one_worker = _stored(pg)
        assert one_worker[0] > 0 and one_worker[1] > 0
        move_prices(venue)  # what the paused worker fetches when it wakes differs
        gate.released.set()
    finally:
        paused.send_signal(signal.SIGCONT)
    late = _stop_when_idle(paused)
    refused = f"refused: unit {unit} was taken over by another worker while this one ran it; its commit"
    assert refused in late, late[-3000:]
    assert _stored(pg) == one_worker  # not one row more, not one market rewritten
    (row,) = _units(pg)
    assert (row.state, row.attempts, row.lease_owner) == ("done", 2, took.split()[1])


def _stop_when_idle(worker: subprocess.Popen[str]) -> str:
    out, _ = worker.communicate(timeout=TIMEOUT)
    assert worker.returncode == 0, out[-3000:]
    return out
