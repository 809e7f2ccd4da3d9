"""``arena serve --metrics-port``: Prometheus metrics read from the database at each scrape.

A live cohort really runs a round (a baseline, a bettor that fails, an LLM agent on a fake
provider that bills each request), jobs record their outcomes and a unit waits in the queue;
the scraped text, parsed by ``prometheus_client``'s own parser, must count exactly those. A real
``arena serve`` process serves the endpoint; a port already taken is a one-line error.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine

from arena.core.clock import SimulatedClock
from arena.core.summary import Summary
from arena.engine.live.jobs import JobFailure, rounds_job
from arena.scheduling.metrics import ArenaCollector
from arena.scheduling.runs import JobFailed, JobSpec, run_once
from arena.workers import queue
from tests.engine.live_world import launch_live, store_market
from tests.fakes.openai_server import FakeOpenAIServer, Reply

T0 = datetime(2026, 3, 2, tzinfo=UTC)
EVERY = timedelta(minutes=1)


def _samples(
    engine: Engine, clock: SimulatedClock, leading: bool = True
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    registry = CollectorRegistry()
    registry.register(ArenaCollector(engine, clock, lambda: leading))
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _cohort(engine: Engine, base_url: str) -> str:
    store_market(engine, "polymarket:m1", T0 + timedelta(days=30), [(T0, "0.4")])
    llm = {"name": "llm", "kind": "llm", "model": "fake/model", "base_url": base_url, "api_key_env": ""}
    llm["knowledge_cutoff"] = "2024-12-01"
    broken = {"name": "broken", "kind": "plugin", "path": "tests.engine.bots:FailingBettor"}
    return launch_live(
        engine, T0 + timedelta(minutes=1), [{"name": "hold", "kind": "hold"}, broken, llm], name="m"
    )


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        answer = {"reasoning": "hold", "actions": [], "probabilities": {}}
        server.responder = lambda _request: Reply.ok(json.dumps(answer), cost=0.25, delay_s=0.05)
        yield server


def test_the_scrape_counts_what_the_database_holds(engine: Engine, provider: FakeOpenAIServer) -> None:
    cohort = _cohort(engine, provider.base_url)
    clock = SimulatedClock(T0 + timedelta(minutes=2))
    rounds_job(engine, clock, environ={})
    run_once(JobSpec("marks", EVERY, lambda _e, _c: Summary("1 portfolios marked"), "t"), engine, clock)
    partial = Summary("polymarket: 1 selected", warnings=["listing: HTTP 503"])
    run_once(JobSpec("sync", EVERY, lambda _e, _c: partial, "t"), engine, clock)

    def broken(_e: Engine, _c: SimulatedClock) -> str:
        raise JobFailure("every agent failed")

    with pytest.raises(JobFailed):
        run_once(JobSpec("settle", EVERY, broken, "t"), engine, clock)
    if engine.dialect.name == "postgresql":  # the queue needs PostgreSQL
        queue.enqueue(engine, queue.SYNC, "polymarket", clock.now() - timedelta(seconds=30))
    got = _samples(engine, clock)
    assert got[("arena_database_up", ())] == 1
    assert got[("arena_serve_leader", ())] == 1 and got[("arena_scheduler_up", ())] == 0
    assert got[("arena_rounds_total", (("cohort", cohort), ("status", "done")))] == 1
    assert got[("arena_agent_errors_total", (("agent", "broken"), ("cohort", cohort)))] == 1
    assert got[("arena_llm_requests_total", (("model", "fake/model"), ("outcome", "answer")))] == 1
    assert got[("arena_llm_cost_usd_total", (("model", "fake/model"),))] == 0.25
    assert got[("arena_llm_latency_seconds_count", (("model", "fake/model"),))] == 1
    assert got[("arena_llm_latency_seconds_sum", (("model", "fake/model"),))] >= 0.05
    outcomes = {k[1]: v for k, v in got.items() if k[0] == "arena_job_runs_total"}
    assert outcomes == {
        (("job", "marks"), ("outcome", "ok")): 1,
        (("job", "settle"), ("outcome", "failed")): 1,
        (("job", "sync"), ("outcome", "partial")): 1,
    }
    assert got[("arena_job_last_outcome", (("job", "sync"), ("outcome", "partial")))] == 1
    if engine.dialect.name == "postgresql":
        assert got[("arena_work_units", (("kind", "sync"), ("state", "queued")))] == 1
        assert got[("arena_unit_queue_lag_seconds", (("kind", "sync"),))] >= 30
    assert got[("arena_health_problems", (("kind", "job_failed"),))] == 1
    assert got[("arena_health_problems", (("kind", "job_partial"),))] == 1
    assert got[("arena_health_problems", (("kind", "scheduler_down"),))] == 1  # a live cohort, no serve


def test_a_scrape_without_the_database_says_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from arena.db.engine import make_engine

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = make_engine(f"postgresql://nobody@127.0.0.1:{port}/none")
    assert _samples(down, SimulatedClock(T0)) == {("arena_database_up", ()): 0}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(engine: Engine, port: int) -> subprocess.Popen[str]:
    env = {**os.environ, "ARENA_DATABASE_URL": engine.url.render_as_string(hide_password=False)}
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--poll", "0.3", "--metrics-port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_arena_serve_serves_its_metrics(engine: Engine) -> None:
    port = _free_port()
    proc = _serve(engine, port)
    try:
        deadline, text = time.monotonic() + 120, ""
        up = ("arena_serve_leader 1.0", "arena_database_up 1.0", "arena_scheduler_up 1.0")
        while not all(gauge in text for gauge in up):  # one scrape may land while the leader starts
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.terminate()
                raise AssertionError(f"a gauge stayed down: {text}\n{proc.communicate(timeout=30)[0]}")
            time.sleep(0.2)
            try:
                text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
            except httpx.TransportError:
                continue
        second = _serve(engine, port)  # a second serve on the same port: one line, exit 2
        out, _ = second.communicate(timeout=60)
        assert second.returncode == 2 and f"error: --metrics-port {port}: cannot listen" in out, out
    finally:
        proc.terminate()
        proc.wait(timeout=30)
