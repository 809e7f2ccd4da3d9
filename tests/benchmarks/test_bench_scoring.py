"""Scoring at scale: 100 agents, 200,000 resolved bets on 5,000 markets, 2,000-replicate intervals.

Target: the full leaderboard in under 3 s and 2 GiB. Measured in a fresh interpreter so the
peak memory is the scoring's own (plus the frames it scores), never asserted on: recorded.
Run with ``make bench`` (or ``pytest tests/benchmarks/test_bench_scoring.py -s -m benchmark``).
"""

from __future__ import annotations

import pytest

from tests.benchmarks.own_process import run_measured
from tests.benchmarks.results import Figure, record

RUNS = 3

CHILD = """
import json, time
from arena.scoring import Settings, leaderboard, leaderboard_document
from tests.scoring.synthetic import World, synthetic_frames

started = time.perf_counter()
frames = synthetic_frames(World(agents=100, markets=5_000, bets=200_000, days=120))
generated = time.perf_counter() - started
runs = []
for _ in range({runs}):
    wall, cpu = time.perf_counter(), time.process_time()
    table = leaderboard(frames, seed=0, replicates=2_000)
    runs.append((time.perf_counter() - wall, time.process_time() - cpu))
wall = time.perf_counter()
document = leaderboard_document(frames, Settings(), cohorts=["c1"], as_of=None)
document_s = time.perf_counter() - wall
print(json.dumps({{
    "generated_s": generated,
    "runs": runs,
    "document_s": document_s,
    "agents": table.height,
    "bets": int(table["bets"].sum()),
    "resolved_bets": int(table["resolved_bets"].sum()),
    "markets": frames.resolutions.height,
    "statements": frames.forecasts.height,
    "prices": frames.prices.height,
    "breakdown_rows": len(document["breakdowns"]),
}}))
"""


@pytest.mark.benchmark
def test_bench_full_leaderboard() -> None:
    figures = run_measured(CHILD.format(runs=RUNS))
    assert figures["agents"] == 100
    assert figures["resolved_bets"] > 150_000
    walls = sorted(wall for wall, _ in figures["runs"])
    median = walls[len(walls) // 2]
    peak = figures["peak_rss_mib"]
    record(
        "scoring",
        measures=f"the full leaderboard: {figures['agents']} agents, {figures['bets']:,} bets on "
        f"{figures['markets']:,} markets, 2,000-replicate intervals",
        command="pytest tests/benchmarks/test_bench_scoring.py -s -m benchmark",
        figures=[
            Figure(f"leaderboard, median of {RUNS}", median, "s", target="< 3 s", met=median < 3),
            Figure("JSON document with breakdowns and calibration", figures["document_s"], "s"),
            Figure("peak RSS", peak, "MiB", target="< 2 GiB", met=peak < 2048),
        ],
    )
