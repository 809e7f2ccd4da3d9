"""A whole replay of the bundled dataset: six baselines, weekly rounds, daily marks (printed, not asserted).

Target: under 60 s wall and 1 GiB peak memory on 2 cores. The replay runs in a subprocess of its
own so its peak RSS is measured alone; wall and CPU time are both printed because on a shared
machine wall time includes waiting for the CPU. Correctness is asserted: the cohort completes and
every ledger reconciles with its fill log.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.benchmarks.own_process import run_measured
from tests.benchmarks.results import Figure, record

BASELINES = ("hold", "market", "random", "favorite", "contrarian", "kelly")


def replay_bundled(db_url: str) -> dict[str, float]:
    """Launch and replay the cohort in this process; return the figures."""
    import asyncio

    from sqlmodel import Session

    from arena.cohorts.config import parse_config
    from arena.cohorts.launch import launch
    from arena.core.clock import SystemClock
    from arena.db.engine import make_engine
    from arena.db.migrate import upgrade
    from arena.engine.replay.runner import ReplayRunner
    from arena.engine.runtime.cohort import load_runtime
    from arena.engine.runtime.sources import open_source
    from arena.engine.store.ledger_store import reconcile

    started, cpu = time.perf_counter(), time.process_time()
    engine = make_engine(db_url)
    upgrade(engine)
    config = parse_config(
        {
            "name": "bench",
            "schedule": {"every": "7d"},
            "marks": {"every": "1d"},
            "agents": [{"name": k, "kind": k} for k in BASELINES],
        }
    )
    source = open_source(config, engine)
    cohort = launch(engine, config, source=source, environ={}, clock=SystemClock()).cohort_id
    rt = load_runtime(engine, cohort, source=source, environ={})
    loaded = time.perf_counter()
    result = asyncio.run(ReplayRunner(rt).run())
    replayed = time.perf_counter()
    assert result.completed, result
    with Session(engine) as session:
        assert reconcile(session, rt.rules, [s.id for s in rt.agents]) == []
    days = (result.end - rt.start).total_seconds() / 86_400  # type: ignore[operator]
    return {
        "setup_s": loaded - started,
        "replay_s": replayed - loaded,
        "cpu_s": time.process_time() - cpu,
        "simulated_days": days,
        "rounds": len(result.rounds),
        "fills": sum(s.book.fill_count for s in rt.agents),
    }


@pytest.mark.benchmark
def test_replay_whole_bundled_dataset(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'bench.db'}"
    code = (
        "import json; from tests.benchmarks.test_bench_replay import replay_bundled; "
        f"print(json.dumps(replay_bundled({db_url!r})))"
    )
    started = time.perf_counter()
    figures = run_measured(code)
    wall = time.perf_counter() - started
    peak_mib = figures["peak_rss_mib"]
    days, replay_s = figures["simulated_days"], figures["replay_s"]
    record(
        "replay",
        measures=f"a replay of the bundled dataset: {len(BASELINES)} baselines, weekly rounds, daily marks",
        command="pytest tests/benchmarks/test_bench_replay.py -s -m benchmark",
        figures=[
            Figure("wall of the process, imports included", wall, "s", target="< 60 s", met=wall < 60),
            Figure("replay alone", replay_s, "s"),
            Figure("CPU of the process", figures["cpu_s"], "s"),
            Figure("simulated days a second", days / replay_s, "days/s"),
            Figure("peak RSS", peak_mib, "MiB", target="< 1 GiB", met=peak_mib < 1024),
        ],
    )
