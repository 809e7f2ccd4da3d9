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
        print(f"\n{agents} agents x {markets} markets x {days} days: {figures}", flush=True)
    base = rows[0][3]
    lines = [
        "\nreplay growth (SQLite, weekly rounds, daily marks; factors against the first row)",
        f"{'agents':>7} {'markets':>8} {'days':>5} {'size x':>7} {'CPU s':>7} {'CPU x':>6} {'load s':>7} "
        f"{'wall s':>7} {'peak MiB':>9} {'rounds':>7} {'fills':>7} {'load avg':>9}",
    ]
    for agents, markets, days, f, load in rows:
        size = agents * markets * days / (BASE[0] * BASE[1] * BASE[2])
        lines.append(
            f"{agents:>7} {markets:>8} {days:>5} {size:>7.1f} {f['cpu_s']:>7.1f} "
            f"{f['cpu_s'] / base['cpu_s']:>6.2f} {f['load_cpu_s']:>7.2f} {f['wall_s']:>7.1f} "
            f"{f['peak_mib']:>9.0f} {f['rounds']:>7.0f} {f['fills']:>7.0f} {load:>9.2f}"
        )
    print("\n".join(lines))
