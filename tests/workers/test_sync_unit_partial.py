"""A sync handed to a worker whose venue listing answers 503 halfway: the worker stores what it
could and finishes the unit done with a warning; ``arena serve``'s sync job is then partial
(``arena status``: ``job_partial``), never ok."""

from __future__ import annotations

import time
from collections.abc import Iterator
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
from arena.scheduling.runs import JobSpec, run_once
from arena.workers import roster
from tests.engine.live_world import launch_live
from tests.fakes.polymarket_server import FakePolymarket, real_polymarket
from tests.fakes.venue_server import Fault
from tests.workers import ON_POSTGRES
from tests.workers.llm_study import start_worker, stop

pytestmark = [ON_POSTGRES, pytest.mark.slow]


@pytest.fixture
def pg(db_url: str) -> Iterator[Engine]:
    upgrade(db_url)
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def test_a_workers_sync_that_met_a_503_makes_the_job_partial(
    pg: Engine, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with real_polymarket() as venue:
        _partial_sync(pg, db_url, venue, tmp_path, monkeypatch)


def _partial_sync(
    pg: Engine, db_url: str, venue: FakePolymarket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"ARENA_GAMMA_URL": venue.url, "ARENA_CLOB_URL": venue.url}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    launch_live(pg, datetime.now(UTC) + timedelta(days=1), [{"name": "fav", "kind": "favorite"}])
    body = partial(handoff.sync, leading=lambda: True, within=timedelta(seconds=60))
    spec = JobSpec("sync", timedelta(seconds=1), body, "sync")  # a period a second: no wait between runs
    clock = SystemClock()  # the roster's heartbeats are wall-clock times
    assert run_once(spec, pg, clock)  # no worker yet: in-process, the markets stored
    worker = start_worker(db_url, tmp_path / "worker.log", lease=10, env=env)
    try:
        deadline = time.monotonic() + 60
        while not roster.idle(pg, datetime.now(UTC)):
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
            time.sleep(0.1)
        venue.fail("/markets/keyset", Fault(status=503), times=50)
        assert run_once(spec, pg, clock)
    finally:
        stop(worker)
    with Session(pg) as session:
        (unit,) = session.exec(select(WorkUnitRow).where(WorkUnitRow.kind == "sync")).all()
    assert unit.state == "done" and unit.error is not None and "503" in unit.error
    sync = next(j for j in check(pg, clock.now()).jobs if j.name == "sync")
    assert sync.outcome == "partial" and sync.last_message.startswith("1 sync unit(s) for workers: 1 done")
    assert any("503" in w for w in sync.warnings), sync.warnings
    assert "(partly failed:" in (tmp_path / "worker.log").read_text()
