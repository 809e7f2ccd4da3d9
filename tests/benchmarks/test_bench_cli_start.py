"""``arena leaderboard`` on the demo cohort, from a cold process: start-up next to its floor.

Target: ≤ 0.8 s wall. The floor, measured in the same run: a Python process starting and
importing ``arena`` (``python -c "import arena"``), plus the scoring itself, timed in a process
that has already imported everything (the same command invoked a second time in-process). What
lies above the floor is the imports the command needs; ``arena --help`` is timed beside it, as
the start-up of a command that imports nothing. Printed, never asserted on time.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import subprocess
import sys
import time

import pytest

from tests.benchmarks.own_process import ROOT, run_measured

pytestmark = pytest.mark.benchmark
RUNS = 5
# Warm: the leaderboard twice in one process; the second run is the scoring with nothing to import.
WARM = """
import json, sys, time
from typer.testing import CliRunner
from arena.cli import app
args = ["leaderboard", "--cohort", sys.argv[1], "--database-url", sys.argv[2]]
walls = []
for _ in range({runs} + 1):
    started = time.perf_counter()
    result = CliRunner().invoke(app, args)
    walls.append(time.perf_counter() - started)
    assert result.exit_code == 0, result.output
print(json.dumps({{"warm_s": sorted(walls[1:])[len(walls[1:]) // 2]}}))
"""


def _median_wall(*args: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    walls = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, check=True)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The demo cohort, made by ``arena demo`` (database URL, cohort id)."""
    path = tmp_path_factory.mktemp("demo") / "arena.db"
    url = f"sqlite:///{path}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "arena.cli", "demo", "--no-report", "--database-url", url]
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
    with sqlite3.connect(path) as connection:
        (cohort,) = connection.execute("SELECT id FROM cohort").fetchone()
    return url, cohort


def test_bench_leaderboard_start_up(demo: tuple[str, str]) -> None:
    url, cohort = demo
    cold = _median_wall("-m", "arena.cli", "leaderboard", "--cohort", cohort, "--database-url", url)
    python = _median_wall("-c", "import arena")
    help_s = _median_wall("-m", "arena.cli", "--help")
    code = f"import sys; sys.argv[1:] = [{cohort!r}, {url!r}]\n" + WARM.format(runs=RUNS)
    warm = run_measured(code)["warm_s"]
    floor = python + warm
    print(
        f"\narena leaderboard on the demo cohort (median of {RUNS}): cold {cold:.2f} s wall "
        f"(target ≤ 0.8 s); floor {floor:.2f} s = start-up {python:.2f} s + scoring {warm:.2f} s "
        f"(warm, in-process); ratio {cold / floor:.2f}; imports ≈ {cold - floor:.2f} s; "
        f"arena --help {help_s:.2f} s; load average {os.getloadavg()[0]:.1f}"
    )
