"""Scoring at scale: 100 agents, 200,000 resolved bets on 5,000 markets, 2,000-replicate intervals.

Target: the full leaderboard in under 3 s and 2 GiB. Measured in a fresh interpreter so the
peak memory is the scoring's own (plus the frames it scores), never asserted on: printed.
Run with ``make bench`` (or ``pytest tests/benchmarks/test_bench_scoring.py -s -m benchmark``).
"""

from __future__ import annotations

import pytest

from tests.benchmarks.own_process import run_measured

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
    print(
        f"\nscoring benchmark: {figures['agents']} agents, {figures['bets']:,} bets "
        f"({figures['resolved_bets']:,} resolved) on {figures['markets']:,} markets, "
        f"{figures['statements']:,} stated probabilities, {figures['prices']:,} prices"
    )
    print(f"  frames generated in {figures['generated_s']:.2f} s (not part of the target)")
    for i, (wall, cpu) in enumerate(figures["runs"], 1):
        print(f"  leaderboard run {i}: {wall:.2f} s wall, {cpu:.2f} s CPU (2,000 replicates)")
    print(f"  median {walls[len(walls) // 2]:.2f} s wall (target < 3 s)")
    print(f"  full JSON document (+ breakdowns, calibration tables): {figures['document_s']:.2f} s")
    print(f"  peak RSS of the process: {figures['peak_rss_mib']:.0f} MiB (target < 2048 MiB)")
