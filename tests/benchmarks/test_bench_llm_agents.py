"""100 LLM agents deciding at once against a provider that takes 1.0 s per call (printed, not asserted).

The figure that matters is wall time / 1.0 s: close to 1 means the agents really run
concurrently and the arena's own work (prompt rendering, parsing, validation) is small next to
the provider's latency. Each agent gets a 50-market prompt (of 64 open markets) with realistic
descriptions, and all agents share one ``httpx.AsyncClient`` as the arena's composition root
builds it. Two rounds run on the same client: the first opens 100 connections, the second
reuses the kept-alive ones. The CPU figure (whole process) is what does not overlap with the
provider's wait when the machine is busy. "on the wire" is when the last request reached the provider,
i.e. the client-side overhead of starting 100 decisions. A last round posts the same request
bodies with bare httpx (no bettor): the ratio the transport and the fake provider alone reach
on this machine, against which the bettor's own overhead can be judged.
"""

from __future__ import annotations

import json
import os
import time

import anyio
import httpx
import pytest

from agents.llm import LLMBettor, LLMSettings
from agents.types import AgentView, Decision
from tests.agents.corpus.world import entries, entry, market, valid_answer, view
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply

AGENTS = 100
PROVIDER_LATENCY_S = 1.0
# httpx's own defaults. More kept-alive connections make the second round slower, not faster:
# httpcore's pool re-assigns each freed connection to every queued request (encode/httpcore#1035).
LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)


def answer_after_a_second(request: RecordedRequest) -> Reply:
    return Reply.ok(f"```json\n{json.dumps(valid_answer())}\n```", delay_s=PROVIDER_LATENCY_S, cost=0.001)


def bench_view() -> AgentView:
    filler = tuple(
        entry(
            market(f"b{i}", f"Benchmark question {i}?", volume=str(100 + i), description="x " * 600),
            {"YES": "0.5"},
        )
        for i in range(60)
    )
    return view(snapshot_entries=entries() + filler)


async def one_round(bettors: list[LLMBettor], agent_view: AgentView) -> tuple[float, list[Decision]]:
    decisions: list[Decision] = []

    async def one(bettor: LLMBettor) -> None:
        decisions.append(await bettor.decide(agent_view))

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for bettor in bettors:
            group.start_soon(one, bettor)
    return time.perf_counter() - started, decisions


@pytest.mark.benchmark
def test_bench_100_llm_agents_decide_concurrently() -> None:
    agent_view = bench_view()
    with FakeOpenAIServer() as server:
        server.responder = answer_after_a_second

        async def run() -> None:
            async with httpx.AsyncClient(limits=LIMITS) as http:
                settings = LLMSettings(
                    model="bench/model", base_url=server.base_url, max_markets=50, timeout_s=30
                )
                bettors = [
                    LLMBettor(f"llm-{i}", settings, http, "bench-key-0123456789") for i in range(AGENTS)
                ]
                for round_name in ("cold", "warm"):
                    server.requests.clear()
                    started, cpu = time.perf_counter(), time.process_time()
                    wall, decisions = await one_round(bettors, agent_view)
                    cpu = time.process_time() - cpu
                    on_wire = max(r.received_at for r in server.requests) - started
                    report(round_name, wall, cpu, on_wire, decisions, len(server.requests))
                await bare_round(http, server)

        anyio.run(run)


async def bare_round(http: httpx.AsyncClient, server: FakeOpenAIServer) -> None:
    """The same request bodies posted with bare httpx: what transport and fake provider cost alone."""
    url, body = f"{server.base_url}/chat/completions", server.requests[0].body

    async def post() -> None:
        response = await http.post(url, json=body, timeout=30)
        assert response.status_code == 200

    started, cpu = time.perf_counter(), time.process_time()
    async with anyio.create_task_group() as group:
        for _ in range(AGENTS):
            group.start_soon(post)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    ratio = wall / PROVIDER_LATENCY_S
    print(f"bare httpx round (same bodies, no bettor): wall {wall:.3f} s, ratio {ratio:.3f}, CPU {cpu:.3f} s")


def report(
    round_name: str, wall: float, cpu: float, on_wire: float, decisions: list[Decision], requests: int
) -> None:
    assert requests == AGENTS and len(decisions) == AGENTS
    assert all(not d.is_error and len(d.actions) == 3 for d in decisions)
    latencies = sorted(d.usage.latency_s for d in decisions)
    print(
        f"\n{round_name} round: {AGENTS} LLM agents, provider latency {PROVIDER_LATENCY_S:.1f} s: "
        f"wall {wall:.3f} s, ratio {wall / PROVIDER_LATENCY_S:.3f} (target < 1.2); "
        f"CPU of this process (bettors, httpx and the fake server) {cpu:.3f} s; "
        f"all requests on the wire after {on_wire:.3f} s; per-agent latency "
        f"median {latencies[len(latencies) // 2]:.3f} s, max {latencies[-1]:.3f} s; "
        f"prompt {len(decisions[0].raw_prompt or ''):,} chars; load average {os.getloadavg()[0]:.1f}"
    )
