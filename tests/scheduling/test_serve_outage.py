"""``arena serve`` outlives its database: real processes, PostgreSQL behind a loopback TCP proxy
that a test cuts (every connection dropped, nothing listening) for longer than the leader lease.

A live cohort of baselines and LLM agents (a fake provider on loopback, which counts what it is
asked) has a round every 15 s. The cut starts right after round 0, so round 1 falls due while
the leader cannot reach the database. Afterwards every round is done once: one round row each,
one decision per agent per round, each LLM agent asked exactly once per round, and the serve
processes are still running, having said what happened without a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, make_url
from sqlmodel import Session, func, select

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db import leases
from arena.db.models import AgentRow, DecisionRow, RoundRow
from arena.engine.runtime.sources import open_source
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.polymarket_server import FakePolymarket, real_polymarket
from tests.workers import ON_POSTGRES
from tests.workers.llm_study import SlowProvider, stop
from tests.workers.tcp_proxy import TcpProxy

pytestmark = [ON_POSTGRES, pytest.mark.slow]
ROUNDS, LLM_AGENTS, EVERY = 4, 2, 15
TIMEOUT = 150.0


@pytest.fixture
def venue() -> Iterator[FakePolymarket]:
    with real_polymarket() as fake:
        yield fake


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.responder = SlowProvider(0.0, hold=True)
        yield server


@pytest.fixture
def proxy(engine: Engine) -> Iterator[TcpProxy]:
    url = engine.url
    tcp = TcpProxy((url.host or "127.0.0.1", url.port or 5432))
    yield tcp
    tcp.down()


def _through(engine: Engine, proxy: TcpProxy) -> str:
    return make_url(engine.url).set(port=proxy.port).render_as_string(hide_password=False)


def _launch(engine: Engine, base_url: str, start_at: datetime) -> str:
    llm = {"kind": "llm", "model": "fake/model", "base_url": base_url, "api_key_env": ""}
    llm |= {"timeout_s": 10, "knowledge_cutoff": "2024-12-01"}
    agents = [{"name": "fav", "kind": "favorite"}, {"name": "hold", "kind": "hold"}]
    agents += [{"name": f"llm-{i}", **llm} for i in range(LLM_AGENTS)]
    config = parse_config(
        {
            "name": "outage",
            "mode": "live",
            "venue": "polymarket",
            "start": start_at.isoformat(),
            "schedule": {"every": f"{EVERY}s", "rounds": ROUNDS},
            "call_timeout": "10s",
            "round_budget": "20s",
            "agents": agents,
        }
    )
    clock = SimulatedClock(start_at)
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def _serve(url: str, venue: FakePolymarket, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "ARENA_DATABASE_URL": url,
        "ARENA_GAMMA_URL": venue.url,
        "ARENA_CLOB_URL": venue.url,
        "ARENA_LEADER_LEASE": "3s",
        "ARENA_ROUNDS_EVERY": "1s",
        "ARENA_MARKS_EVERY": "2s",
        "ARENA_SYNC_EVERY": "5s",
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--poll", "0.3"], env=env, stdout=out, stderr=out
        )


def _wait(predicate: Callable[[], bool], what: str, logs: list[Path], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p.name}\n{p.read_text()[-2500:]}" for p in logs)
            raise AssertionError(f"timed out waiting for {what}\n{tails}")
        time.sleep(0.1)


def _all_done(engine: Engine, cohort: str) -> bool:
    return _rounds(engine, cohort) == [(i, "done") for i in range(ROUNDS)]


def _rounds(engine: Engine, cohort: str) -> list[tuple[int, str]]:
    with Session(engine) as session:
        rows = session.exec(select(RoundRow).where(RoundRow.cohort_id == cohort)).all()
    return sorted((r.round_index, r.status) for r in rows)


def _asked(provider: FakeOpenAIServer) -> int:
    return len(provider.requests)


def _exactly_once(engine: Engine, cohort: str, provider: FakeOpenAIServer) -> None:
    assert _rounds(engine, cohort) == [(i, "done") for i in range(ROUNDS)]
    with Session(engine) as session:
        agents = session.exec(select(func.count()).where(AgentRow.cohort_id == cohort)).one()
        decisions = session.exec(
            select(DecisionRow.round_id, DecisionRow.agent_id).where(DecisionRow.cohort_id == cohort)
        ).all()
    assert len(decisions) == len(set(decisions)) == ROUNDS * agents  # one per agent per round
    assert _asked(provider) == ROUNDS * LLM_AGENTS  # each LLM agent asked once a round, never again


def _said_and_survived(proc: subprocess.Popen[bytes], log: Path) -> str:
    assert proc.poll() is None, log.read_text()[-3000:]  # still serving
    assert stop(proc) == 0
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    return text


def test_a_cut_longer_than_the_lease_loses_and_doubles_no_round(
    engine: Engine, venue: FakePolymarket, provider: FakeOpenAIServer, proxy: TcpProxy, tmp_path: Path
) -> None:
    cohort = _launch(engine, provider.base_url, datetime.now(UTC) + timedelta(seconds=8))
    proxy.up()
    log = tmp_path / "serve.log"
    proc = _serve(_through(engine, proxy), venue, log)
    try:
        _wait(lambda: (0, "done") in _rounds(engine, cohort), "round 0", [log])
        proxy.down()  # round 1 falls due during the cut
        owner = leases.holder(engine)
        time.sleep(EVERY + 3)  # far longer than the 3 s lease
        assert leases.holder(engine) == owner  # expired, but nobody else took it
        proxy.up()
        _wait(
            lambda: _all_done(engine, cohort),
            "every round",
            [log],
        )
        text = _said_and_survived(proc, log)
    finally:
        stop(proc)
    _exactly_once(engine, cohort, provider)
    assert "database unreachable" in text and "retrying in 0.5 s" in text and "retrying in 1 s" in text
    assert "database reachable again" in text
    assert "lost the lease" not in text  # re-acquired: its row still named it
    assert text.count("leader; starting the scheduler") == 1


def test_a_standby_takes_over_during_the_cut_and_the_old_leader_steps_down(
    engine: Engine, venue: FakePolymarket, provider: FakeOpenAIServer, proxy: TcpProxy, tmp_path: Path
) -> None:
    cohort = _launch(engine, provider.base_url, datetime.now(UTC) + timedelta(seconds=8))
    proxy.up()
    cut_log, standby_log = tmp_path / "cut.log", tmp_path / "standby.log"
    cut = _serve(_through(engine, proxy), venue, cut_log)  # reaches the database through the proxy
    standby = None
    try:
        _wait(lambda: leases.holder(engine) is not None, "a leader", [cut_log])
        standby = _serve(engine.url.render_as_string(hide_password=False), venue, standby_log)
        logs = [cut_log, standby_log]
        _wait(lambda: (0, "done") in _rounds(engine, cohort), "round 0", logs)
        first = leases.holder(engine)
        assert first is not None
        proxy.down()
        _wait(
            lambda: (h := leases.holder(engine)) is not None and h.owner != first.owner, "the takeover", logs
        )
        _wait(lambda: (1, "done") in _rounds(engine, cohort), "round 1, by the standby", logs)
        proxy.up()
        _wait(lambda: "lost the lease; stopping the scheduler" in cut_log.read_text(), "the step-down", logs)
        _wait(
            lambda: _all_done(engine, cohort),
            "every round",
            logs,
        )
        cut_text = _said_and_survived(cut, cut_log)
        standby_text = _said_and_survived(standby, standby_log)
    finally:
        for proc in (cut, standby):
            if proc is not None:
                stop(proc)
    _exactly_once(engine, cohort, provider)
    assert "database unreachable" in cut_text and "database reachable again" in cut_text
    assert "leader; starting the scheduler" in standby_text


def test_serve_started_while_the_database_is_down_waits_for_it(
    engine: Engine, venue: FakePolymarket, proxy: TcpProxy, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    proc = _serve(_through(engine, proxy), venue, log)  # nothing listens there yet
    try:
        _wait(lambda: "retrying in 2 s" in log.read_text(), "three attempts", [log], timeout=30)
        assert proc.poll() is None  # waiting, not exiting with 2
        proxy.up()
        _wait(lambda: leases.holder(engine) is not None, "the lease, once the database is back", [log])
        text = _said_and_survived(proc, log)
    finally:
        stop(proc)
    waits = [line.split("retrying in ")[1] for line in text.splitlines() if "retrying in" in line]
    assert waits[:3] == ["0.5 s", "1 s", "2 s"]  # one line per backoff step, doubling
