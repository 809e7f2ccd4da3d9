"""One round of 1,000 LLM agents, in one process and as decision units run by 1, 2 and 4
``arena worker`` processes (printed, not asserted).

The provider is the loopback fake of ``test_bench_llm_agents`` in a process of its own (1.0 s per
answer, every agent holds). The round goes through the real round path at the default config
(``concurrency`` and ``llm_limits`` as shipped): ``run_round`` in this process for the floor, and
``planner.plan_round`` (open the round, one unit per agent, wait, close) with the workers taking
the units. The prompt is a real one: 50 markets with 1,200-character descriptions, about what a
venue's markets give. Figures: wall time of the round, this process's CPU (the planner, or the
whole round for the floor) and each worker's CPU (``/proc/PID/stat``) over the round. Workers
start before the round, and each loads the cohort (bettors, ledgers) inside it: that is their
real first-round cost. ``ARENA_BENCH_AGENTS`` sets the cohort size (default 1,000).

Correctness is asserted: every agent's decision is ``done`` once, every unit done on its first
lease. The figures must be read with one fact in mind: ``llm_limits`` (100 requests/s, 128 in
flight per provider) holds per process, so N workers may send N times as much to a provider.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import secrets
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import URL, create_engine
from sqlmodel import Session, select

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import DecisionRow, WorkUnitRow
from arena.engine.rounds.report import RoundReport
from arena.engine.rounds.run import round_time, run_round
from arena.engine.runtime.agent_http import AgentHttpClients
from arena.engine.runtime.cohort import load_runtime
from arena.engine.runtime.sources import open_source
from arena.scheduling.planner import plan_round
from arena.workers import roster
from markets.replay import DatasetInfo, write_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue
from tests.benchmarks.results import Figure, record
from tests.benchmarks.test_bench_llm_agents import provider
from tests.workers.llm_study import start_worker, stop

AGENTS = int(os.environ.get("ARENA_BENCH_AGENTS", "1000"))
WORKERS = (1, 2, 4)
D0 = datetime(2025, 1, 1, tzinfo=UTC)
TICK = os.sysconf("SC_CLK_TCK")

pytestmark = [pytest.mark.benchmark, pytest.mark.postgres]


@pytest.fixture
def schemas(postgres_database: URL) -> Iterator[list[str]]:
    """An empty schema per measured run, migrated to head."""
    admin = create_engine(postgres_database, isolation_level="AUTOCOMMIT")
    names = [f"bench_{secrets.token_hex(4)}" for _ in range(1 + len(WORKERS))]
    with admin.connect() as connection:
        for name in names:
            connection.exec_driver_sql(f"CREATE SCHEMA {name}")
    urls = [
        postgres_database.set(query={"options": f"-csearch_path={n}"}).render_as_string(hide_password=False)
        for n in names
    ]
    for url in urls:
        upgrade(url)
    yield urls
    with admin.connect() as connection:
        for name in names:
            connection.exec_driver_sql(f"DROP SCHEMA {name} CASCADE")
    admin.dispose()


def _dataset(directory: Path) -> Path:
    """64 binary markets with long descriptions, priced on day 0, resolving on day 30."""
    markets = [
        Market(
            venue=Venue.POLYMARKET,
            venue_id=f"b{i:02d}",
            question=f"Benchmark question {i}?",
            description="x " * 600,
            close_time=D0 + timedelta(days=30),
            volume=Decimal(1000 + i),
        )
        for i in range(64)
    ]
    prices = [
        PriceSnapshot(m.market_id, {"YES": Decimal("0.5"), "NO": Decimal("0.5")}, D0, "bench")
        for m in markets
    ]
    resolutions = [
        Resolution.binary(m.market_id, ResolutionKind.YES, D0 + timedelta(days=30), "bench") for m in markets
    ]
    info = DatasetInfo(name="bench", version="1", source="benchmark", license="CC0", created_with="tests")
    write_dataset(directory, markets=markets, prices=prices, resolutions=resolutions, info=info)
    return directory


def _launch(url: str, dataset: Path, base_url: str) -> str:
    llm: dict[str, Any] = {"kind": "llm", "model": "bench/model", "base_url": base_url, "api_key_env": ""}
    llm.update(timeout_s=30, knowledge_cutoff="2024-12-01", max_markets=50)
    config = parse_config(
        {
            "name": "bench",
            "dataset": str(dataset),
            "start": D0,
            "schedule": {"every": "7d", "rounds": 1},
            "universe": {"max_markets": 50, "min_price": "0.01", "max_price": "0.99"},
            "agents": [{"name": f"llm-{i}", **llm} for i in range(AGENTS)],
        }
    )
    engine = make_engine(url)
    try:
        source = open_source(config, engine)
        return launch(engine, config, source=source, environ={}, clock=SimulatedClock(D0)).cohort_id
    finally:
        engine.dispose()


def _round(url: str, cohort: str, *, planned: bool) -> tuple[float, float, RoundReport]:
    """(wall, this process's CPU, report) of round 0, run in-process or planned for workers."""
    engine = make_engine(url)

    async def main() -> tuple[float, float, RoundReport]:
        async with AgentHttpClients() as clients:
            rt = load_runtime(engine, cohort, environ={}, new_http_client=clients.new_client)
            at = round_time(rt.start, rt.config.schedule.every, 0)
            started, cpu = time.perf_counter(), time.process_time()
            report = await (plan_round(rt, 0, at) if planned else run_round(rt, 0, at))
            return time.perf_counter() - started, time.process_time() - cpu, report

    try:
        return asyncio.run(main())
    finally:
        engine.dispose()


def _cpu(pid: int) -> float:
    """User + system CPU seconds of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _check(url: str, *, units: bool) -> None:
    engine = make_engine(url)
    with Session(engine) as session:
        statuses = session.exec(select(DecisionRow.status)).all()
        rows = session.exec(select(WorkUnitRow)).all()
    engine.dispose()
    assert sorted(statuses) == ["done"] * AGENTS, sorted(set(statuses))
    if units:
        assert len(rows) == AGENTS and {(u.state, u.attempts) for u in rows} == {("done", 1)}


def _with_workers(url: str, cohort: str, count: int, logs: Path) -> tuple[float, float, list[float]]:
    procs = [start_worker(url, logs / f"worker-{count}-{i}.log", lease=30) for i in range(count)]
    engine = make_engine(url)
    try:
        deadline = time.monotonic() + 120
        while roster.live_workers(engine, datetime.now(UTC)) < count:
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), (
                "workers did not start"
            )
            time.sleep(0.1)
        before = [_cpu(p.pid) for p in procs]
        wall, cpu, report = _round(url, cohort, planned=True)
        after = [_cpu(p.pid) for p in procs]
    finally:
        engine.dispose()
        for proc in procs:
            stop(proc)
    assert report.status == "done", report
    _check(url, units=True)
    return wall, cpu, [b - a for a, b in zip(before, after, strict=True)]


def test_bench_a_round_of_llm_agents_by_workers(schemas: list[str], tmp_path: Path) -> None:
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(target=provider, args=(theirs, True), daemon=True)
    child.start()
    base_url = ours.recv()
    dataset = _dataset(tmp_path / "data")
    try:
        cohorts = [_launch(url, dataset, base_url) for url in schemas]
        floor, floor_cpu, report = _round(schemas[0], cohorts[0], planned=False)
        assert report.status == "done", report
        _check(schemas[0], units=False)
        runs = [
            _with_workers(url, c, n, tmp_path)
            for url, c, n in zip(schemas[1:], cohorts[1:], WORKERS, strict=True)
        ]
    finally:
        ours.send("stop")
        child.join(timeout=10)
    figures = [Figure("one process (run_round)", floor, "s")]
    for n, (wall, _, workers) in zip(WORKERS, runs, strict=True):
        figures += [
            Figure(f"{n} worker(s), wall", wall, "s", floor=floor),
            Figure(f"{n} worker(s), CPU of the workers", sum(workers), "s", floor=floor_cpu),
        ]
    record(
        "worker_round",
        measures=f"one round of {AGENTS:,} LLM agents planned as decision units for workers (provider 1.0 s)",
        command="pytest tests/benchmarks/test_bench_worker_rounds.py -s -m benchmark",
        figures=figures,
    )
