"""100 LLM agents deciding at once against a provider that takes 1.0 s per call (printed, not asserted).

The headline runs the path a user runs: ``replay_cohort`` on a one-round cohort of 100 LLM agents
with the default config (every agent asked at once, the default per-provider limits), against
the same cohort with one LLM agent (one call through the same path: the floor) and with 100
``hold`` agents (the arena's own work without any provider). Target: 100 agents ≤ 1.3× one.

The diagnostics below it call ``decide`` directly. There the figure that matters is wall time /
1.0 s: close to 1 means the agents really run concurrently and the arena's own work (prompt
rendering, parsing, validation) is small next to the provider's latency. Each agent gets a
50-market prompt (of 64 open markets) with realistic descriptions, and each agent has an
``httpx.AsyncClient`` of its own, made by ``AgentHttpClients`` as the arena's composition root
makes them. The fake provider runs in a
process of its own, as a real one would be remote.

Two rounds run on the same clients: the first opens the connections, the second reuses the
kept-alive ones. "CPU" is this process's CPU time in the round (bettors plus httpx); "on the
wire" is when the last request reached the provider. Two last rounds post the same request
bodies with bare httpx (no bettor, 100 clients made the same way, cold then warm): what the
transport alone reaches on this machine, against which the bettor's own overhead can be judged.
A last control splits those bare posts over two processes (50 clients each, started together):
whether even both cores, with no bettor at all, bring the transport under the target here.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from multiprocessing.connection import Connection
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from sqlmodel import Session, select

from agents.llm.bettor import LLMBettor
from agents.llm.output import DECISION_SCHEMA
from agents.llm.prompt import render_prompt
from agents.llm.settings import LLMSettings
from agents.llm.wire import encode_request
from agents.types import AgentView, Decision
from arena.core.clock import SystemClock
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import DecisionRow
from arena.engine.replay.runner import replay_cohort
from arena.engine.runtime.agent_http import AgentHttpClients
from tests.agents.corpus.world import entries, entry, market, valid_answer, view
from tests.benchmarks.results import Figure, record
from tests.engine.helpers import config, launch_cohort, tiny_dataset
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply

AGENTS = 100
PROVIDER_LATENCY_S = 1.0
SETTINGS: dict[str, Any] = {"model": "bench/model", "max_markets": 50, "timeout_s": 30}
JSON = {"Content-Type": "application/json"}


def answer_after_a_second(request: RecordedRequest) -> Reply:
    return Reply.ok(f"```json\n{json.dumps(valid_answer())}\n```", delay_s=PROVIDER_LATENCY_S, cost=0.001)


def hold_after_a_second(request: RecordedRequest) -> Reply:
    answer = {"reasoning": "Nothing here is mispriced enough.", "actions": [], "probabilities": {}}
    return Reply.ok(json.dumps(answer), delay_s=PROVIDER_LATENCY_S, cost=0.001)


def provider(conn: Connection, holds: bool = False) -> None:
    """Child process: serve until told to stop; on "arrivals", send and forget the requests' arrival times."""
    with FakeOpenAIServer() as server:
        server.responder = hold_after_a_second if holds else answer_after_a_second
        conn.send(server.base_url)
        while conn.recv() == "arrivals":
            conn.send([r.received_at for r in server.requests])
            server.requests.clear()


def bench_view() -> AgentView:
    filler = tuple(
        entry(
            market(f"b{i}", f"Benchmark question {i}?", volume=str(100 + i), description="x " * 600),
            {"YES": "0.5", "NO": "0.5"},
        )
        for i in range(60)
    )
    return view(snapshot_entries=entries() + filler)


async def one_round(bettors: list[LLMBettor], agent_view: AgentView) -> tuple[float, float, list[Decision]]:
    decisions: list[Decision] = []

    async def one(bettor: LLMBettor) -> None:
        decisions.append(await bettor.decide(agent_view))

    started, cpu = time.perf_counter(), time.process_time()
    async with anyio.create_task_group() as group:
        for bettor in bettors:
            group.start_soon(one, bettor)
    return time.perf_counter() - started, time.process_time() - cpu, decisions


async def bare_round(clients: list[httpx.AsyncClient], url: str, body: bytes) -> tuple[float, float]:
    async def post(http: httpx.AsyncClient) -> None:
        response = await http.post(url, content=body, headers=JSON, timeout=30)
        assert response.status_code == 200

    started, cpu = time.perf_counter(), time.process_time()
    async with anyio.create_task_group() as group:
        for http in clients:
            group.start_soon(post, http)
    return time.perf_counter() - started, time.process_time() - cpu


def replay_one_round(
    tmp_path: Path, base_url: str, agents: int, kind: str, **overrides: Any
) -> tuple[float, list[str]]:
    """Wall time of ``replay_cohort`` over a one-round cohort of ``agents`` agents of ``kind``
    (config ``overrides`` on top of the defaults), and the statuses of its decisions."""
    llm = {"kind": "llm", "model": "bench/model", "base_url": base_url, "api_key_env": "", "timeout_s": 30}
    llm["knowledge_cutoff"] = "2024-12-01"  # before the data: the leakage guard stays on
    specs = [{"name": f"{kind}-{i}", **(llm if kind == "llm" else {"kind": kind})} for i in range(agents)]
    label = f"{kind}-{agents}-" + "-".join(f"{k}{v}" for k, v in overrides.items())
    engine = make_engine(f"sqlite:///{tmp_path / f'{label}.db'}")
    upgrade(engine)
    data = config(tiny_dataset(tmp_path / f"data-{label}"), specs, schedule={"every": "7d", "rounds": 1})
    data.update(overrides)
    cohort_id, source = launch_cohort(engine, data)
    started = time.perf_counter()
    result = anyio.run(lambda: replay_cohort(engine, cohort_id, source, environ={}, wall_clock=SystemClock()))
    wall = time.perf_counter() - started
    assert result.completed and len(result.rounds) == 1
    with Session(engine) as session:
        statuses = [d.status for d in session.exec(select(DecisionRow))]
    engine.dispose()
    return wall, statuses


@pytest.mark.benchmark
def test_bench_100_llm_agents_through_a_replay_round(tmp_path: Path) -> None:
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(target=provider, args=(theirs, True), daemon=True)
    child.start()
    base_url = ours.recv()
    try:
        one, one_statuses = replay_one_round(tmp_path, base_url, 1, "llm")
        hundred, statuses = replay_one_round(tmp_path, base_url, AGENTS, "llm")
        holds, _ = replay_one_round(tmp_path, base_url, AGENTS, "hold")
        eights, _ = replay_one_round(tmp_path, base_url, AGENTS, "llm", concurrency=8)
    finally:
        ours.send("stop")
        child.join(timeout=10)
    assert one_statuses == ["done"] and statuses == ["done"] * AGENTS
    record(
        "llm_round",
        measures=f"{AGENTS} LLM agents through a replay round, provider latency {PROVIDER_LATENCY_S:.1f} s",
        command="pytest tests/benchmarks/test_bench_llm_agents.py -s -m benchmark -k through_a_replay",
        figures=[
            Figure(
                f"{AGENTS} LLM agents",
                hundred,
                "s",
                floor=one,
                target="≤ 1.3× one agent",
                met=hundred <= 1.3 * one,
            ),
            Figure(f"{AGENTS} hold agents, no provider", holds, "s"),
            Figure(f"{AGENTS} LLM agents, concurrency 8", eights, "s", floor=one),
        ],
    )


@pytest.mark.benchmark
def test_bench_100_llm_agents_decide_concurrently() -> None:
    agent_view = bench_view()
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(target=provider, args=(theirs,), daemon=True)
    child.start()
    base_url = ours.recv()

    def last_arrival(started: float) -> float:
        ours.send("arrivals")
        arrivals: list[float] = ours.recv()
        assert len(arrivals) == AGENTS
        return max(arrivals) - started  # perf_counter is CLOCK_MONOTONIC: comparable across processes

    figures: list[Figure] = []

    async def run() -> None:
        async with AgentHttpClients() as clients:
            settings = LLMSettings(**SETTINGS, base_url=base_url)
            key = "bench-key-0123456789"
            bettors = [LLMBettor(f"llm-{i}", settings, clients.new_client(), key) for i in range(AGENTS)]
            for round_name in ("cold", "warm"):
                started = time.perf_counter()
                wall, _, decisions = await one_round(bettors, agent_view)
                check(decisions)
                last_arrival(started)
                figures.append(
                    Figure(
                        f"{AGENTS} LLM agents decide, {round_name} connections",
                        wall,
                        "s",
                        floor=PROVIDER_LATENCY_S,
                        target="< 1.2× the provider's latency",
                        met=wall < 1.2 * PROVIDER_LATENCY_S,
                    )
                )
            bare = [clients.new_client() for _ in range(AGENTS)]
            body = same_body(agent_view, settings)
            for round_name in ("cold", "warm"):
                started = time.perf_counter()
                wall, _ = await bare_round(bare, f"{base_url}/chat/completions", body)
                last_arrival(started)
                figures.append(Figure(f"bare httpx, {round_name}", wall, "s", floor=PROVIDER_LATENCY_S))

    try:
        anyio.run(run)
        url, body = (
            f"{base_url}/chat/completions",
            same_body(agent_view, LLMSettings(**SETTINGS, base_url=base_url)),
        )
        for round_name, wall in zip(("cold", "warm"), bare_in_two_processes(url, body), strict=True):
            figures.append(
                Figure(f"bare httpx in 2 processes, {round_name}", wall, "s", floor=PROVIDER_LATENCY_S)
            )
        record(
            "llm_decide",
            measures=f"{AGENTS} LLM agents with 50-market prompts deciding at once, provider latency "
            f"{PROVIDER_LATENCY_S:.1f} s; bare httpx posting the same bodies as a control",
            command="pytest tests/benchmarks/test_bench_llm_agents.py -s -m benchmark -k concurrently",
            figures=figures,
        )
    finally:
        ours.send("stop")
        child.join(timeout=10)


def bare_in_two_processes(url: str, body: bytes) -> list[float]:
    """Wall time of a cold and a warm bare round whose posts are split over two processes."""
    spawn = multiprocessing.get_context("spawn")
    barrier, out = spawn.Barrier(2), spawn.Queue()
    workers = [spawn.Process(target=_bare_half, args=(url, body, barrier, out)) for _ in range(2)]
    for worker in workers:
        worker.start()
    spans = [out.get(timeout=120) for _ in range(2 * len(workers))]
    for worker in workers:
        worker.join(timeout=30)
    return [max(end for r, _, end in spans if r == i) - min(s for r, s, _ in spans if r == i) for i in (0, 1)]


def _bare_half(url: str, body: bytes, barrier: Barrier, out: Queue[tuple[int, float, float]]) -> None:
    """Child process: half the bare posts, two rounds, each started with the other child."""

    async def run() -> None:
        async with AgentHttpClients() as clients:
            half = [clients.new_client() for _ in range(AGENTS // 2)]
            for index in (0, 1):
                barrier.wait()
                started = time.perf_counter()
                await bare_round(half, url, body)
                out.put((index, started, time.perf_counter()))

    anyio.run(run)


def same_body(agent_view: AgentView, settings: LLMSettings) -> bytes:
    """The request body an LLM bettor sends for ``agent_view``."""
    return encode_request(settings, render_prompt(agent_view, settings).messages(), DECISION_SCHEMA)


def check(decisions: list[Decision]) -> None:
    """Every agent answered with its three bets."""
    assert len(decisions) == AGENTS
    assert all(not d.is_error and len(d.actions) == 3 for d in decisions)
