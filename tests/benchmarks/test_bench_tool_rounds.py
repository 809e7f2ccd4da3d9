"""A round of 100 tool-using LLM agents through the real round path (printed, not asserted).

Each agent makes 3 tool calls, one per provider step, then answers: 4 steps against a provider
that takes 1.0 s per step, so the floor of one agent is 4 s, and a round with concurrency >= 100
should end within 1.2 x 4 s. The round runs through ``run_round`` (snapshot, claims, views with
toolboxes, the tool loop, commits of decisions with their tool-call and request rows) on SQLite.
The same round with agents that answer at once (one step) is measured in the same run as the
floor of the round path itself; the tool round is reported against 4 x that floor too.

The provider runs in a process of its own, as a real one would be remote.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlmodel import Session, func, select

from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import DecisionRow, ToolCallRow
from arena.engine.rounds.run import run_round
from arena.engine.runtime.agent_http import AgentHttpClients
from tests.benchmarks.results import Figure, record
from tests.engine.helpers import A, config, day, launch_cohort, runtime, tiny_dataset
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply

AGENTS = 100
LATENCY_S = 1.0
CALLS = (("search_markets", {"query": "happen"}), ("price_history", {"market_id": A}), ("portfolio", {}))
HOLD = json.dumps({"reasoning": "Holding.", "actions": [], "probabilities": {A: 0.5}})


def respond(request: RecordedRequest) -> Reply:
    """Researchers call one tool per step until they have made three; everyone else answers."""
    done = sum(1 for m in request.body["messages"] if m["role"] == "tool")
    if request.body["model"] == "bench/researcher" and done < len(CALLS):
        return Reply.calls(CALLS[done], delay_s=LATENCY_S, cost=0.0001)
    return Reply.ok(HOLD, delay_s=LATENCY_S, cost=0.0001)


def provider(conn: Connection) -> None:
    with FakeOpenAIServer() as server:
        server.responder = respond
        conn.send(server.base_url)
        conn.recv()


def agents(base_url: str, model: str) -> list[dict[str, Any]]:
    tools = {"enabled": True, "max_calls": 3, "timeout_s": 10}
    return [
        {
            "name": f"llm-{i}",
            "kind": "llm",
            "model": model,
            "base_url": base_url,
            "api_key_env": "",
            "prompt_version": "v2",
            "timeout_s": 30,
            "tools": tools if model == "bench/researcher" else {},
        }
        for i in range(AGENTS)
    ]


def one_round(folder: Path, base_url: str, model: str) -> tuple[float, float, int, float]:
    """Wall and CPU seconds of round 0 of a fresh cohort, the tool calls it stored, and the
    slowest agent's own decision time (the rest of the wall is the round's own work: snapshot,
    claims, and the commits of 100 decisions)."""
    folder.mkdir()
    engine = make_engine(f"sqlite:///{folder / 'arena.db'}")
    upgrade(engine)
    data = config(tiny_dataset(folder / "data"), agents(base_url, model))  # default concurrency
    cohort_id, source = launch_cohort(engine, data)

    async def run() -> tuple[float, float]:
        async with AgentHttpClients() as http:
            rt = runtime(engine, cohort_id, source, new_http_client=http.new_client)
            started, cpu = time.perf_counter(), time.process_time()
            report = await run_round(rt, 0, day(0))
            assert report.status == "done" and set(report.statuses.values()) == {"done"}, report.errors
            return time.perf_counter() - started, time.process_time() - cpu

    wall, cpu = anyio.run(run)
    with Session(engine) as session:
        calls = session.exec(select(func.count()).select_from(ToolCallRow)).one()
        slowest = session.exec(select(func.max(DecisionRow.latency_s))).one()
    engine.dispose()
    return wall, cpu, calls, float(slowest or 0)


@pytest.mark.benchmark
def test_bench_a_round_of_100_tool_using_agents(tmp_path: Path) -> None:
    spawn = multiprocessing.get_context("spawn")
    ours, theirs = spawn.Pipe()
    child = spawn.Process(target=provider, args=(theirs,), daemon=True)
    child.start()
    base_url = ours.recv()
    try:
        floor, _, _, floor_agent = one_round(tmp_path / "direct", base_url, "bench/direct")
        wall, _, calls, agent = one_round(tmp_path / "research", base_url, "bench/researcher")
    finally:
        ours.send("stop")
        child.join(timeout=10)
    assert calls == AGENTS * len(CALLS)
    steps = len(CALLS) + 1
    target = steps * LATENCY_S
    record(
        "tool_round",
        measures=f"a round of {AGENTS} LLM agents, {len(CALLS)} tool calls each, {LATENCY_S:.1f} s a step",
        command="pytest tests/benchmarks/test_bench_tool_rounds.py -s -m benchmark",
        figures=[
            Figure(
                f"the round, {steps} steps",
                wall,
                "s",
                floor=steps * floor,
                target=f"≤ 1.2 × {target:g} s",
                met=wall <= 1.2 * target,
            ),
            Figure("slowest agent's decision", agent, "s", floor=steps * floor_agent),
        ],
    )
