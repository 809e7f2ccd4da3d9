"""A large synthetic replay world for the replay benchmarks: a dataset of ``markets`` binary
markets over ``days`` days (each listed for a seeded stretch of the span, one daily price while
listed, resolving at its end), and a cohort of ``agents`` baselines over it (weekly rounds, daily
marks). Written straight as the dataset's CSV files with polars so building it costs little."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
from sqlalchemy import Engine

from markets.replay.format import DatasetInfo, write_info

ROOT = Path(__file__).resolve().parents[2]
START = date(2025, 1, 1)
KINDS = ("hold", "market", "half", "random", "favorite", "contrarian", "kelly", "crowd")


def write_world(directory: Path, *, markets: int, days: int, seed: int = 3) -> Path:
    """Write the dataset to ``directory``; about half the markets are listed at any day."""
    rng = random.Random(seed)
    market_rows, ids, dates, prices = [], [], [], []
    for i in range(markets):
        opens = rng.randrange(0, max(1, days // 2))
        ends = min(days - 1, opens + rng.randrange(max(2, days // 10), days))
        market_id = f"m{i:05d}"
        price = rng.uniform(0.1, 0.9)
        for d in range(opens, ends + 1):
            price = min(0.97, max(0.03, price + rng.uniform(-0.04, 0.04)))
            ids.append(f"polymarket:{market_id}")
            dates.append(START + timedelta(days=d))
            prices.append(f"{price:.4f}")
        resolved = datetime.combine(START + timedelta(days=ends + 1), datetime.min.time(), UTC)
        market_rows.append(
            {
                "venue": "polymarket",
                "venue_id": market_id,
                "question": f"Will synthetic event {i} happen?",
                "outcomes": json.dumps(["YES", "NO"]),
                "resolution": "YES" if rng.random() < price else "NO",
                "resolved_at": resolved.isoformat(),
                "close_time": resolved.isoformat(),
                "volume": str(rng.randrange(100, 100_000)),
            }
        )
    directory.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(market_rows).write_csv(directory / "markets.csv")
    pl.DataFrame({"market_id": ids, "date": dates, "price": prices}).write_csv(directory / "prices.csv")
    info = DatasetInfo(name="bench", version="1", source="synthetic", license="CC0", created_with="bench")
    write_info(directory, info)
    from markets.replay.write import rehash_dataset

    rehash_dataset(directory)
    return directory


def cohort_config(dataset: Path, agents: int) -> dict[str, Any]:
    """The cohort starts at the dataset's first usable price (``start`` left out): in the base
    world that is day 1, a close being usable the next day; a longer world opens later."""
    return {
        "name": "bench",
        "dataset": str(dataset),
        "seed": 5,
        "schedule": {"every": "7d"},
        "marks": {"every": "1d"},
        "universe": {"max_markets": 40, "min_price": "0.03", "max_price": "0.97"},
        "agents": [
            {"name": f"{KINDS[i % len(KINDS)]}-{i}", "kind": KINDS[i % len(KINDS)]} for i in range(agents)
        ],
    }


def in_subprocess(call: str) -> dict[str, float]:
    """The figures of ``call`` (a ``replay_world(...)`` call) run in a fresh Python process, so
    its CPU time and peak RSS are its own."""
    code = f"import json; from tests.benchmarks.replay_world import replay_world; print(json.dumps({call}))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def replay_world(
    db_url: str,
    dataset: str,
    agents: int,
    floor_url: str | None = None,
    *,
    synchronous_commit: bool = True,
    pipelined: bool = True,
) -> dict[str, float]:
    """Launch and replay the cohort in this process (a benchmark's own subprocess); the figures,
    with this process's CPU time and peak RSS. ``write_s`` is the CPU time spent inside the
    replay's write transactions; with ``floor_url`` (an empty database) the same rows are then
    copied there in one transaction, the floor those writes are compared with.
    ``synchronous_commit=False``: the replay's writes use ``relaxed_commits``, as
    ``ARENA_REPLAY_SYNCHRONOUS_COMMIT=off`` makes ``arena replay`` do. ``pipelined=False``: one
    statement at a time on PostgreSQL, as ``ARENA_PG_PIPELINE=off`` makes it."""
    import asyncio

    from arena.cohorts.config import parse_config
    from arena.cohorts.launch import launch
    from arena.core.clock import SystemClock
    from arena.db.engine import make_engine, relaxed_commits
    from arena.db.migrate import upgrade
    from arena.engine.replay.runner import ReplayRunner
    from arena.engine.runtime.cohort import load_runtime
    from arena.engine.runtime.sources import open_source

    engine = make_engine(db_url, pipelined=pipelined)
    upgrade(engine)
    cpu, wall = time.process_time(), time.perf_counter()
    config = parse_config(cohort_config(Path(dataset), agents))
    source = open_source(config, engine)
    loaded_cpu = time.process_time() - cpu
    cohort = launch(engine, config, source=source, environ={}, clock=SystemClock()).cohort_id
    writes = engine if synchronous_commit else relaxed_commits(engine)
    rt = load_runtime(writes, cohort, source=source, environ={})
    with timed_writes() as writes:
        result = asyncio.run(ReplayRunner(rt).run())
    assert result.completed, result
    figures = {
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "load_cpu_s": loaded_cpu,
        "write_s": writes[0],
        "peak_mib": peak_rss_mib(),
        "rounds": len(result.rounds),
        "fills": sum(s.book.fill_count for s in rt.agents),
    }
    if engine.dialect.name == "postgresql":
        figures["server_cpu_s"] = server_cpu(engine)
    if floor_url is not None:
        figures |= copy_floor(engine, floor_url)
    return figures


def server_cpu(engine: Engine) -> float:
    """CPU seconds used so far by the PostgreSQL backends serving this database (the replay's own
    connections: each benchmark replays into a database of its own); -1 when the server does not
    run on this machine."""
    from tests.benchmarks.server_cpu import backend_cpu

    with engine.connect() as connection:
        pids = connection.exec_driver_sql(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        ).scalars()
        readings = [backend_cpu(pid) for pid in pids]
    return -1.0 if None in readings else sum(r for r in readings if r is not None)


def peak_rss_mib() -> float:
    """This process's own peak RSS. ``ru_maxrss`` is not: Linux carries it over from the parent
    through fork and exec, so a child of a big test process reports the parent's peak. The
    kernel's high-water mark of the process's current memory map (``VmHWM``) starts afresh at exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # no /proc: the best there is


@contextmanager
def timed_writes() -> Iterator[list[float]]:
    """Sum the CPU time spent inside the write transactions of the replay path (rounds, marks,
    settlements), by wrapping ``session_scope`` where those modules use it."""
    from arena.db import engine as db_engine
    from arena.engine.books import settlement
    from arena.engine.replay import runner as replay
    from arena.engine.rounds import report as round_report
    from arena.engine.rounds import run as rounds
    from arena.engine.store import round_store

    total = [0.0]
    real = db_engine.session_scope

    @contextmanager
    def scope(*args: Any, **kwargs: Any) -> Iterator[Any]:
        started = time.process_time()
        try:
            with real(*args, **kwargs) as session:
                yield session
        finally:
            total[0] += time.process_time() - started

    modules = (replay, rounds, round_report, settlement, round_store)
    saved = [m.__dict__.get("session_scope") for m in modules]
    for m in modules:
        if "session_scope" in m.__dict__:
            m.session_scope = scope  # type: ignore[attr-defined]
    try:
        yield total
    finally:
        for m, old in zip(modules, saved, strict=True):
            if old is not None:
                m.session_scope = old  # type: ignore[attr-defined]


def copy_floor(engine: Engine, floor_url: str) -> dict[str, float]:
    """Every row the replay stored, inserted into an empty database of the same schema in ONE
    transaction (one executemany per table): the floor for the replay's writes."""
    from arena.db.engine import make_engine
    from arena.db.migrate import upgrade
    from arena.db.models import metadata

    target = make_engine(floor_url)
    upgrade(target)
    with engine.connect() as connection:
        tables = [
            (t, [dict(r) for r in connection.execute(t.select()).mappings()]) for t in metadata.sorted_tables
        ]
    tables = [(t, rows) for t, rows in tables if rows and t.name != "alembic_version"]
    started = time.process_time()
    with target.begin() as connection:
        for table, rows in tables:
            connection.execute(table.insert(), rows)
    return {"floor_s": time.process_time() - started, "floor_rows": float(sum(len(r) for _, r in tables))}
