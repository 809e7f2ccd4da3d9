"""A study for worker tests: replay configs as TOML files (what a user queues), and workers as
real ``arena worker`` processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINES = ("random", "favorite", "contrarian", "kelly", "crowd", "hold")


def study_config(path: Path, dataset: Path, *, name: str, every: str = "1d", seed: int = 7) -> Path:
    """A replay cohort of the six baselines over ``dataset`` from its first day (2025-01-01).

    Short claim leases (``call_timeout`` + ``round_budget``) so a paused worker's claims free up
    in seconds, as its unit lease does."""
    agents = "".join(f'\n[[agents]]\nname = "{kind}"\nkind = "{kind}"\n' for kind in BASELINES)
    path.write_text(
        f'name = "{name}"\nseed = {seed}\ndataset = "{dataset}"\nstart = "2025-01-01T00:00:00Z"\n'
        f'call_timeout = "1s"\nround_budget = "2s"\n'
        f'\n[schedule]\nevery = "{every}"\n'
        '\n[universe]\nmax_markets = 8\nmin_price = "0.01"\nmax_price = "0.99"\n' + agents,
        encoding="utf-8",
    )
    return path


def arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def start_worker(
    db_url: str, *extra: str, lease: float = 2, until_idle: bool = True
) -> subprocess.Popen[str]:
    """An ``arena worker`` process (by default ``--until-idle``) with a short lease; its output is
    kept for asserts."""
    idle = ("--until-idle",) if until_idle else ()
    return subprocess.Popen(
        arena("worker", "--database-url", db_url, *idle, "--lease", str(lease), "--poll", "0.2", *extra),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
