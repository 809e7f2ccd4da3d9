"""A large synthetic replay world for the replay benchmarks: a dataset of ``markets`` binary
markets over ``days`` days (each listed for a seeded stretch of the span, one daily price while
listed, resolving at its end), and a cohort of ``agents`` baselines over it (weekly rounds, daily
marks). Written straight as the dataset's CSV files with polars so building it costs little."""

from __future__ import annotations

import json
import random
import resource
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from markets.replay.format import DatasetInfo, write_info

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
    return {
        "name": "bench",
        "dataset": str(dataset),
        "start": datetime.combine(START + timedelta(days=1), datetime.min.time(), UTC),  # a close is usable the next day
        "seed": 5,
        "schedule": {"every": "7d"},
        "marks": {"every": "1d"},
        "universe": {"max_markets": 40, "min_price": "0.03", "max_price": "0.97"},
        "agents": [{"name": f"{KINDS[i % len(KINDS)]}-{i}", "kind": KINDS[i % len(KINDS)]} for i in range(agents)],
    }


def replay_world(db_url: str, dataset: str, agents: int) -> dict[str, float]:
    """Launch and replay the cohort in this process (a benchmark's own subprocess); the figures,
    with this process's CPU time and peak RSS."""
    import asyncio

    from arena.clock import SystemClock
    from arena.cohorts.config import parse_config
    from arena.cohorts.launch import launch
    from arena.db.engine import make_engine
    from arena.db.migrate import upgrade
    from arena.engine.replay import ReplayRunner
    from arena.engine.runtime import load_runtime
    from arena.engine.sources import open_source

    engine = make_engine(db_url)
    upgrade(engine)
    cpu, wall = time.process_time(), time.perf_counter()
    config = parse_config(cohort_config(Path(dataset), agents))
    source = open_source(config, engine)
    loaded_cpu = time.process_time() - cpu
    cohort = launch(engine, config, source=source, environ={}, clock=SystemClock()).cohort_id
    rt = load_runtime(engine, cohort, source=source, environ={})
    result = asyncio.run(ReplayRunner(rt).run())
    assert result.completed, result
    return {
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "load_cpu_s": loaded_cpu,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rounds": len(result.rounds),
        "fills": sum(s.book.fill_count for s in rt.agents),
    }
