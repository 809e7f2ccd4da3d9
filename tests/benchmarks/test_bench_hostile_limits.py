"""Benchmark: peak memory of one LLM decision and of one venue sync under the largest response the
limits allow, and under a gzip bomb (docs/limits-and-safety.md "Limits").

Each measured run is a process of its own (``own_process.run_measured``: its own peak RSS, and the
peak of Python allocations by ``tracemalloc``); the server runs here, in the test process, so its
buffers are not counted. The floor of each figure is the same process answering a small valid
response (a small answer, a small listing), so the ratio is what the response adds; a gzip bomb's
target is the floor plus three times the limit. Never asserts on time. Writes
``results/limits_llm_decision.json`` and ``results/limits_venue_sync.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.llm.settings import DEFAULT_MAX_RESPONSE_BYTES
from markets.http import DEFAULT_MAX_BODY_BYTES
from tests.benchmarks.own_process import compile_repository, run_measured
from tests.benchmarks.results import Figure, record
from tests.fakes.hostile_server import Abuse, Bomb, HostileServer, Payload
from tests.fakes.manifold_server import lite_market

pytestmark = pytest.mark.benchmark
LLM_BOMB = 2 * 1024**3  # inflated
VENUE_BOMB = 4 * 1024**3
LISTED = 999  # markets in the largest allowed listing page: one short of a full page, so paging stops
START = "2026-08-21T12:00:00+00:00"  # the listed markets are open then

# Each child defines ``work`` (the measured coroutine) and ``summary`` (its figures); ``TRACED`` runs it.
LLM_CHILD = """
import httpx
from agents.llm.bettor import LLMBettor
from agents.llm.settings import LLMSettings
from tests.agents.corpus.world import view

async def work():
    async with httpx.AsyncClient() as http:
        settings = LLMSettings(
            model="m", base_url=URL, api_key_env="", invalid_retries=0, transport_retries=0
        )
        return await LLMBettor("bench", settings, http, None).decide(view())

def summary(decision):
    kept = len(decision.raw_response or "")
    return {"outcome": decision.error_kind or "answer", "raw_response_kept_chars": kept}
"""

SYNC_CHILD = """
from datetime import datetime
from arena.core.clock import SimulatedClock
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.sync.types import SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from markets.types import Venue

engine = make_engine(DB)
upgrade(engine)
settings = SyncSettings(history_days=0, max_days_to_close=None, top_n=1000)

async def work():
    clock = SimulatedClock(datetime.fromisoformat(START))
    return await sync_venue(engine, clock, Venue.MANIFOLD, settings, urls=VenueUrls(manifold=URL))

def summary(report):
    outcome = report.problems[0][1] if report.problems else f"{report.selected} markets kept"
    return {"outcome": outcome, "markets_written": report.markets_written}
"""

TRACED = """
import json, time, tracemalloc
import anyio

tracemalloc.start()
started = time.perf_counter()
result = anyio.run(work)
seconds = time.perf_counter() - started
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
figures = {"seconds": round(seconds, 2), "traced_peak_mib": round(peak / 2**20, 1)}
print(json.dumps({**summary(result), **figures}))
"""


def completion(content: str) -> bytes:
    """A chat completion answering ``content``."""
    message = {"role": "assistant", "content": content}
    usage = {"prompt_tokens": 1000, "completion_tokens": 200}
    return json.dumps({"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage}).encode()


def largest_completion() -> bytes:
    """A completion just under ``max_response_bytes`` (the default): the largest the agent reads."""
    padding = DEFAULT_MAX_RESPONSE_BYTES - len(completion("")) - 64
    body = completion("x" * padding)
    assert len(body) <= DEFAULT_MAX_RESPONSE_BYTES
    return body


def listing(markets: int, bio_chars: int) -> bytes:
    return json.dumps(
        [lite_market(i % 4, id=f"m{i:04d}", creatorBio="b" * bio_chars) for i in range(markets)]
    ).encode()


def largest_listing() -> bytes:
    """A page of ``LISTED`` markets just under the venue's body limit (the default)."""
    per_market = (DEFAULT_MAX_BODY_BYTES - len(listing(LISTED, 0)) - 4096) // LISTED
    body = listing(LISTED, per_market)
    assert DEFAULT_MAX_BODY_BYTES - 8192 < len(body) <= DEFAULT_MAX_BODY_BYTES
    return body


def measure(abuse: Abuse, child: str, **names: str) -> dict[str, Any]:
    with HostileServer(abuse) as server:
        values = {"URL": f"{server.url}/v1", **names} if child is LLM_CHILD else {"URL": server.url, **names}
        preamble = "".join(f"{name} = {value!r}\n" for name, value in values.items())
        found = run_measured(preamble + child + TRACED)
    return {**found, "peak_rss_mib": round(found["peak_rss_mib"], 1)}


def record_memory(
    name: str,
    measures: str,
    scenarios: dict[str, dict[str, Any]],
    floor: dict[str, Any],
    bomb: str,
    limit: int,
) -> None:
    """Record peak RSS and peak Python allocations of each scenario, read against the baseline's;
    a bomb is held to the baseline plus three times the limit."""
    found = []
    for scenario, measured in scenarios.items():
        for what, key in (("peak RSS", "peak_rss_mib"), ("peak Python allocations", "traced_peak_mib")):
            target = floor[key] + 3 * limit / 2**20 if scenario == bomb else None
            met = None if target is None else measured[key] <= target
            shown = None if target is None else f"≤ {target:.0f} MiB"
            found.append(Figure(f"{scenario}: {what}", measured[key], "MiB", floor[key], shown, met))
    selected = name.removeprefix("limits_")  # the test's name ends with it
    command = f"pytest tests/benchmarks/test_bench_hostile_limits.py -s -m benchmark -k {selected}"
    record(name, measures=measures, command=command, figures=found)


def test_bench_one_llm_decision() -> None:
    compile_repository()
    floor = measure(Payload(completion('{"reasoning": "", "actions": [], "probabilities": {}}')), LLM_CHILD)
    bomb = f"a gzip bomb of {LLM_BOMB // 2**30} GiB"
    scenarios = {
        f"the largest allowed body ({DEFAULT_MAX_RESPONSE_BYTES // 2**20} MiB)": measure(
            Payload(largest_completion()), LLM_CHILD
        ),
        bomb: measure(Bomb(LLM_BOMB), LLM_CHILD),
    }
    assert floor["outcome"] == "answer" and scenarios[bomb]["outcome"] == "response_too_large"
    measures = "one LLM decision's memory under the largest response the limit allows, and under a gzip bomb"
    record_memory("limits_llm_decision", measures, scenarios, floor, bomb, DEFAULT_MAX_RESPONSE_BYTES)


def test_bench_one_venue_sync(tmp_path: Path) -> None:
    compile_repository()

    def sync(abuse: Abuse, name: str) -> dict[str, Any]:
        return measure(abuse, SYNC_CHILD, DB=f"sqlite:///{tmp_path / f'{name}.db'}", START=START)

    floor = sync(Payload(listing(4, 0)), "floor")
    bomb = f"a gzip bomb of {VENUE_BOMB // 2**30} GiB"
    scenarios = {
        f"the largest allowed listing ({LISTED} markets, {DEFAULT_MAX_BODY_BYTES // 2**20} MiB)": sync(
            Payload(largest_listing()), "largest"
        ),
        bomb: sync(Bomb(VENUE_BOMB), "bomb"),
    }
    assert next(iter(scenarios.values()))["markets_written"] == LISTED
    assert "exceeds the limit" in scenarios[bomb]["outcome"]
    measures = (
        "one Manifold sync's memory under the largest listing the body limit allows, and under a gzip bomb"
    )
    record_memory("limits_venue_sync", measures, scenarios, floor, bomb, DEFAULT_MAX_BODY_BYTES)
