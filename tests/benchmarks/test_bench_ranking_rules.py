"""The ranking rules at scale: 100 agents × 500 markets × 50 rounds, every rule of issue #12 on.

Both bet readings (fa and kelly), stated forecasts imputed on every offered (round, market), the
Metaculus tournament over whole windows, and 2,000-replicate intervals: the full leaderboard,
through ``arena.scoring.leaderboard`` with its default settings. Targets: ≤ 3 s and ≤ 2 GiB on
the 2-core machine. The floor measured in the same run is the frames' own aggregation (one
polars ``group_by`` mean of every statement and bet), so the ratio says what the rules cost
beyond touching the rows once. Measured in a fresh interpreter (peak memory is the
leaderboard's own), printed, never asserted on time.
"""

from __future__ import annotations

import pytest

from tests.benchmarks.own_process import run_measured
from tests.benchmarks.results import Figure, record

CHILD = """
import json, time
import numpy as np
import polars as pl
from arena.scoring import leaderboard
from arena.scoring.load.frames import ScoringFrames
from tests.scoring.synthetic import DAY_US, START, World, synthetic_frames

ROUNDS, AGENTS = 50, 100
world = World(agents=AGENTS, markets=500, bets=100_000, days=7 * ROUNDS)
base = synthetic_frames(world)
rng = np.random.default_rng(11)
round_days = pl.DataFrame({{"day": np.arange(ROUNDS) * 7}})
prices = base.prices.with_columns(
    day=((pl.col("observed_at").dt.epoch("us") - int(START.timestamp() * 1e6)) // DAY_US)
)
offers = prices.join(round_days, on="day").select(
    cohort_id=pl.lit(world.cohort), market_id="market_id", outcome="outcome",
    offered_at="observed_at", price="price",
)
agents = base.agents.select("cohort_id", "agent")
stated = offers.join(agents, on="cohort_id").sample(fraction=0.5, seed=3)
forecasts = stated.select(
    "cohort_id", "agent", "market_id", "outcome",
    p=(pl.col("price") + pl.Series(rng.normal(0, 0.1, stated.height))).clip(0.01, 0.99),
    stated_at="offered_at",
)
frames = ScoringFrames.of(**{{**{{n: getattr(base, n) for n in (
    "agents", "fills", "resolutions", "prices", "snapshots", "decisions", "listings", "windows")}},
    "offers": offers, "forecasts": forecasts}})

wall = time.perf_counter()
floor = (
    frames.forecasts.group_by("agent").agg(pl.col("p").mean()).height
    + frames.fills.group_by("agent").agg(pl.col("amount").cast(pl.Float64).mean()).height
    + frames.offers.group_by("market_id").agg(pl.col("price").mean()).height
)
floor_s = time.perf_counter() - wall
runs = []
for _ in range(3):
    wall, cpu = time.perf_counter(), time.process_time()
    table = leaderboard(frames, seed=0, replicates=2_000)
    runs.append((time.perf_counter() - wall, time.process_time() - cpu))
print(json.dumps({{
    "runs": runs, "floor_s": floor_s,
    "agents": table.height, "offers": frames.offers.height, "statements": frames.forecasts.height,
    "bets": int(table["bets"].sum()), "markets": frames.resolutions.height,
    "imputed": int(table["stated_brier_imputed"].is_not_null().sum()),
    "kelly": int(table["brier_kelly"].is_not_null().sum()),
    "tournament": int(table["tournament_score"].is_not_null().sum()),
}}))
"""


@pytest.mark.benchmark
def test_bench_leaderboard_with_every_ranking_rule() -> None:
    figures = run_measured(CHILD.format())
    # Every rule really ran for every agent: both readings, imputation and the tournament.
    assert figures["agents"] == figures["imputed"] == figures["kelly"] == figures["tournament"] == 100
    walls = sorted(wall for wall, _ in figures["runs"])
    median = walls[len(walls) // 2]
    peak = figures["peak_rss_mib"]
    record(
        "ranking_rules",
        measures=f"the leaderboard with every ranking rule: {figures['agents']} agents, {figures['markets']} "
        f"markets, {figures['statements']:,} statements, {figures['bets']:,} bets",
        command="pytest tests/benchmarks/test_bench_ranking_rules.py -s -m benchmark",
        figures=[
            Figure(
                "leaderboard, median of 3",
                median,
                "s",
                floor=figures["floor_s"],
                target="≤ 3 s",
                met=median <= 3,
            ),
            Figure("peak RSS", peak, "MiB", target="≤ 2 GiB", met=peak <= 2048),
        ],
    )
