"""How the replay's cost grows with agents, markets and days, up to 10× each (printed, not asserted).

Issue 15 asks how time grows up to 10× the 50-agent × 2,000-market × 365-day cohort. From the
base size, each axis is grown alone: agents 2×, 5× and 10×; markets 2× and 10× (20,000 markets,
3.6 million price rows); days 2× and 10× (3,650 days, 522 weekly rounds). Each replay runs in a
process of its own (one run per size: the 10× ones take minutes of CPU on the shared 2-core
machine), and the table gives its CPU, wall, peak RSS and the growth factors against the base:
a CPU factor near the size factor means linear growth. Every replay must complete.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.benchmarks.replay_world import in_subprocess, write_world
from tests.benchmarks.results import Figure, record

BASE = (50, 2_000, 365)  # agents, markets, days
SIZES = [
    BASE,
    (100, 2_000, 365),
    (250, 2_000, 365),
    (500, 2_000, 365),
    (50, 4_000, 365),
    (50, 20_000, 365),
    (50, 2_000, 730),
    (50, 2_000, 3_650),
]


@pytest.mark.benchmark
@pytest.mark.timeout(5400)  # the 10x replays take minutes each on the shared machine
def test_replay_growth_with_agents_markets_and_days(tmp_path: Path) -> None:
    rows = []
    for agents, markets, days in SIZES:
        world = tmp_path / f"w{markets}x{days}"
        if not world.exists():
            write_world(world, markets=markets, days=days)
        url = f"sqlite:///{tmp_path / f'r{agents}-{markets}-{days}.db'}"
        figures = in_subprocess(f"replay_world({url!r}, {str(world)!r}, {agents})")
        rows.append((agents, markets, days, figures, os.getloadavg()[0]))
    base = rows[0][3]
    figures = []
    for agents, markets, days, f, _ in rows:
        size = agents * markets * days / (BASE[0] * BASE[1] * BASE[2])
        shape = f"{agents} agents × {markets:,} markets × {days} days ({size:g}× the first)"
        figures += [
            Figure(f"{shape}, CPU", f["cpu_s"], "s", floor=base["cpu_s"]),
            Figure(f"{shape}, peak RSS", f["peak_mib"], "MiB", floor=base["peak_mib"]),
        ]
    record(
        "replay_scaling",
        measures="how a replay's CPU and memory grow with agents, markets and days (floor: the first)",
        command="pytest tests/benchmarks/test_bench_replay_scaling.py -s -m benchmark",
        figures=figures,
    )
