"""How the replay's cost grows with agents, markets and days (printed, not asserted).

Issue 15 asks how time grows up to 10× the 50-agent × 2,000-market × 365-day cohort. A full
10× run takes minutes of CPU on the shared 2-core machine, so this runs the base size and one
larger step along each axis (5× agents, 2× markets, 2× days), each replay in a process of its
own, and prints CPU, peak RSS and the growth factor against the base: a factor near the size
factor means linear growth, so larger sizes can be read off the table. Every replay must complete.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.replay_world import in_subprocess, write_world

BASE = (50, 2_000, 365)  # agents, markets, days
SIZES = [BASE, (100, 2_000, 365), (250, 2_000, 365), (50, 4_000, 365), (50, 2_000, 730)]


@pytest.mark.benchmark
def test_replay_growth_with_agents_markets_and_days(tmp_path: Path) -> None:
    worlds: dict[tuple[int, int], Path] = {}
    rows = []
    for agents, markets, days in SIZES:
        if (markets, days) not in worlds:
            worlds[markets, days] = write_world(tmp_path / f"w{markets}x{days}", markets=markets, days=days)
        url = f"sqlite:///{tmp_path / f'r{agents}-{markets}-{days}.db'}"
        figures = in_subprocess(f"replay_world({url!r}, {str(worlds[markets, days])!r}, {agents})")
        rows.append((agents, markets, days, figures))
    base = rows[0][3]
    lines = [
        "\nreplay growth (SQLite, weekly rounds, daily marks; factors against the first row)",
        f"{'agents':>7} {'markets':>8} {'days':>5} {'size x':>7} {'CPU s':>7} {'CPU x':>6} "
        f"{'peak MiB':>9} {'fills':>7}",
    ]
    for agents, markets, days, f in rows:
        size = agents * markets * days / (BASE[0] * BASE[1] * BASE[2])
        lines.append(
            f"{agents:>7} {markets:>8} {days:>5} {size:>7.1f} {f['cpu_s']:>7.1f} "
            f"{f['cpu_s'] / base['cpu_s']:>6.2f} {f['peak_mib']:>9.0f} {f['fills']:>7.0f}"
        )
    print("\n".join(lines))
