"""A leader paused past its lease: the standby takes over, and the woken leader commits nothing.

Real ``arena serve`` processes on PostgreSQL and the fake Polymarket on loopback. The old leader
is stopped (SIGSTOP) in the middle of its market sync, while the venue holds its first request;
the standby takes the lease and syncs. The new leader is then killed (its long lease stays in
the row, so nothing else may lead and nobody else writes) and the old one woken: it finishes
fetching and tries to store the prices that moved meanwhile. The lease fence refuses that commit:
the database holds exactly what the new leader stored, as if there had only ever been one.
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
from arena.core.clock import SimulatedClock
from arena.db import leases
from arena.db.models import JobRunRow, MarketRow, MarketSnapshotRow
from arena.engine.runtime.sources import open_source
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market
from tests.fakes.venue_gate import HoldFirstRequest, move_prices
from tests.workers import ON_POSTGRES
from tests.workers.llm_study import stop

pytestmark = [ON_POSTGRES, pytest.mark.slow]
SHORT_LEASE, LONG_LEASE = "3s", "60s"


@pytest.fixture
def venue() -> Iterator[tuple[FakePolymarket, HoldFirstRequest]]:
    with FakePolymarket() as fake:
        for i in range(len(REAL_MARKETS)):
            fake.add(real_market(i))
        gate = HoldFirstRequest()
        fake.after_request = gate
        try:
            yield fake, gate
        finally:
            gate.released.set()


def _launch_live_cohort(engine: Engine) -> None:
    """A live Polymarket cohort starting tomorrow: the sync job has a venue to sync, no round
    is due yet."""
    now = datetime.now(UTC)
    config = parse_config(
        {
            "name": "fenced",
            "mode": "live",
            "venue": "polymarket",
            "start": (now + timedelta(days=1)).isoformat(),
            "schedule": {"every": "1d", "rounds": 2},
            "agents": [{"name": "fav", "kind": "favorite"}],
        }
    )
    launch(engine, config, source=open_source(config, engine), environ={}, clock=SimulatedClock(now))


def _serve(url: str, venue_url: str, log: Path, lease: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "ARENA_DATABASE_URL": url,
        "ARENA_GAMMA_URL": venue_url,
        "ARENA_CLOB_URL": venue_url,
        "ARENA_LEADER_LEASE": lease,
        "ARENA_SYNC_EVERY": "2s",
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--poll", "0.3"], env=env, stdout=out, stderr=out
        )


def _wait(predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _owner(engine: Engine) -> str | None:
    held = leases.holder(engine)
    return None if held is None else held.owner


def _sync_runs(engine: Engine) -> list[JobRunRow]:
    with Session(engine) as session:
        query = select(JobRunRow).where(JobRunRow.job == "sync").order_by(col(JobRunRow.started_at))
        return list(session.exec(query))


def _stored(engine: Engine) -> tuple[int, int, int]:
    """Price snapshots, markets and the latest market write time (what a sync writes)."""
    with Session(engine) as session:
        snapshots = session.exec(select(func.count()).select_from(MarketSnapshotRow)).one()
        markets, latest = session.exec(select(func.count(), func.max(MarketRow.updated_at))).one()
        return int(snapshots), int(markets), 0 if latest is None else int(latest.timestamp() * 1e6)


def test_a_leader_paused_past_its_lease_commits_nothing_when_it_wakes(
    engine: Engine, venue: tuple[FakePolymarket, HoldFirstRequest], tmp_path: Path
) -> None:
    fake, gate = venue
    url = engine.url.render_as_string(hide_password=False)
    _launch_live_cohort(engine)
    old_log, new_log = tmp_path / "old.log", tmp_path / "new.log"
    old = _serve(url, fake.url, old_log, SHORT_LEASE)
    new = None
    try:
        _wait(gate.held.is_set, "the old leader's sync to reach the venue")
        old_owner = _owner(engine)
        assert old_owner is not None
        old.send_signal(signal.SIGSTOP)
        paused_at = datetime.now(UTC)
        new = _serve(url, fake.url, new_log, LONG_LEASE)
        _wait(lambda: _owner(engine) not in (None, old_owner), "the standby to take the lease over")
        new_owner = _owner(engine)
        _wait(lambda: any(r.ok for r in _sync_runs(engine)), "the new leader's sync")
        new.send_signal(signal.SIGKILL)  # no release: its lease holds for LONG_LEASE
        new.wait(timeout=30)
        one_leader = _stored(engine)
        assert one_leader[0] > 0 and one_leader[1] > 0
        move_prices(fake)
        gate.released.set()  # the old leader's first request is answered...
        old.send_signal(signal.SIGCONT)  # ...and it wakes mid-sync, still believing it leads
        refusal = f"lost the scheduler lease to {new_owner}: this process's job sync commits nothing"
        _wait(lambda: refusal in old_log.read_text(), "the old leader's refusal", timeout=30)
        _wait(lambda: "lost the lease; stopping the scheduler" in old_log.read_text(), "its step-down")
        assert _stored(engine) == one_leader  # not one row more, not one market rewritten
        assert _owner(engine) == new_owner
    finally:
        stop(old)
        if new is not None and new.poll() is None:
            new.kill()
            new.wait()
    assert old.returncode == 0, old_log.read_text()[-3000:]
    assert _stored(engine) == one_leader
    runs = _sync_runs(engine)
    before_pause = [r for r in runs if r.started_at < paused_at]
    # The old leader's sync left only its claim of the period: it recorded neither success nor
    # failure, since that record would have been a write too.
    assert [(r.finished_at, r.ok) for r in before_pause] == [(None, None)], runs
    assert all(r.ok for r in runs if r.finished_at is not None), runs
