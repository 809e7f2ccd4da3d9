"""A sync handed to a worker whose venue listing answers 503 halfway: the worker stores what it
could and finishes the unit done with a warning; ``arena serve``'s sync job is then partial
(``arena status``: ``job_partial``), never ok. A venue answering 503 to everything fails the
unit and the job, in one line of the worker's log (a venue's outage, not a bug: no traceback)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.core.clock import SystemClock
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import WorkUnitRow
from arena.scheduling import handoff
from arena.scheduling.health import check
from arena.scheduling.runs import JobFailed, JobSpec, run_once
from arena.workers import roster
from tests.engine.live_world import launch_live
from tests.fakes.polymarket_server import FakePolymarket, real_polymarket
from tests.fakes.venue_server import Fault
from tests.workers import ON_POSTGRES
from tests.workers.llm_study import start_worker, stop

pytestmark = [ON_POSTGRES, pytest.mark.slow]
CLOCK = SystemClock()  # the roster's heartbeats are wall-clock times


@pytest.fixture
def pg(db_url: str) -> Iterator[Engine]:
    upgrade(db_url)
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def venue() -> Iterator[FakePolymarket]:
    with real_polymarket() as fake:
        yield fake


@contextmanager
def _worker_syncs(
    pg: Engine, db_url: str, venue: FakePolymarket, log: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[JobSpec]:
    """The sync job, once run in-process (the markets stored), with an idle worker to hand it to."""
    env = {"ARENA_GAMMA_URL": venue.url, "ARENA_CLOB_URL": venue.url}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    launch_live(pg, datetime.now(UTC) + timedelta(days=1), [{"name": "fav", "kind": "favorite"}])
    body = partial(handoff.sync, leading=lambda: True, within=timedelta(seconds=60))
    spec = JobSpec("sync", timedelta(seconds=1), body, "sync")  # a period a second: no wait between runs
    assert run_once(spec, pg, CLOCK)  # no worker yet: in-process, the markets stored
    worker = start_worker(db_url, log, lease=10, env=env)
    try:
        deadline = time.monotonic() + 60
        while not roster.idle(pg, datetime.now(UTC)):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield spec
    finally:
        stop(worker)


def _sync_unit(pg: Engine) -> WorkUnitRow:
    with Session(pg) as session:
        (unit,) = session.exec(select(WorkUnitRow).where(WorkUnitRow.kind == "sync")).all()
    return unit


def test_a_workers_sync_that_met_a_503_makes_the_job_partial(
    pg: Engine, db_url: str, venue: FakePolymarket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "worker.log"
    with _worker_syncs(pg, db_url, venue, log, monkeypatch) as spec:
        venue.fail("/markets/keyset", Fault(status=503), times=50)
        assert run_once(spec, pg, CLOCK)
    unit = _sync_unit(pg)
    assert unit.state == "done" and unit.error is not None and "503" in unit.error
    sync = next(j for j in check(pg, CLOCK.now()).jobs if j.name == "sync")
    assert sync.outcome == "partial" and sync.last_message.startswith("1 sync unit(s) for workers: 1 done")
    assert any("503" in w for w in sync.warnings), sync.warnings
    assert "(partly failed:" in log.read_text()


def test_a_workers_sync_that_stored_nothing_fails_the_job_in_one_line(
    pg: Engine, db_url: str, venue: FakePolymarket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "worker.log"
    with _worker_syncs(pg, db_url, venue, log, monkeypatch) as spec:
        for path in ["/markets/keyset", *(f"/markets/{gamma_id}" for gamma_id in venue.markets)]:
            venue.fail(path, Fault(status=503), times=100)
        with pytest.raises(JobFailed, match="sync stored nothing"):
            run_once(spec, pg, CLOCK)
    unit = _sync_unit(pg)
    assert unit.state == "failed" and (unit.error or "").startswith("polymarket: sync stored nothing (")
    sync = next(j for j in check(pg, CLOCK.now()).jobs if j.name == "sync")
    assert sync.outcome == "failed"
    text = log.read_text()
    assert f"unit {unit.id} failed: polymarket: sync stored nothing (" in text
    assert "Traceback" not in text, text
