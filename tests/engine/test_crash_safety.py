"""Crash safety: a replay killed with SIGKILL at random moments and restarted ends exactly where an
uninterrupted run ends, with no decision executed twice and every ledger equal to its fill log.

The runner is a real subprocess on a real database (SQLite file and PostgreSQL); the kills land
anywhere, including inside the transaction that commits a decision with its fills.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import CohortRow
from tests.engine.helpers import config, launch_cohort, synthetic_dataset
from tests.engine.ledger_log import assert_ledgers_reconcile, fill_count, ledger_log

ROOT = Path(__file__).resolve().parents[2]
AGENTS = [{"name": k, "kind": k} for k in ("random", "favorite", "contrarian", "kelly", "crowd", "hold")]
KILLS = 6


def _cohort(engine: Engine, dataset: Path) -> str:
    data = config(
        dataset,
        AGENTS,
        schedule={"every": "2d"},
        universe={"max_markets": 8, "min_price": "0.01", "max_price": "0.99"},
    )
    cohort_id, _ = launch_cohort(engine, data)
    return cohort_id


def _runner(db_url: str, cohort_id: str, dataset: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.engine.crash_runner", db_url, cohort_id, str(dataset)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_killed_and_restarted_replay_matches_an_uninterrupted_one(db_url: str, tmp_path: Path) -> None:
    dataset = synthetic_dataset(tmp_path / "data")
    reference_url = f"sqlite:///{tmp_path / 'reference.db'}"
    reference_engine = make_engine(reference_url)
    upgrade(reference_engine)
    reference = _cohort(reference_engine, dataset)
    assert _runner(reference_url, reference, dataset).wait(timeout=240) == 0
    total = fill_count(reference_engine, reference)

    engine = make_engine(db_url)
    upgrade(engine)
    crashed = _cohort(engine, dataset)
    rng = random.Random(os.getpid())
    # Kill once the fill log reaches each of these sizes (then a few random milliseconds later).
    targets = sorted(rng.sample(range(1, total), KILLS))
    for target in targets:
        runner = _runner(db_url, crashed, dataset)
        assert _kill_at(runner, engine, crashed, target, rng), f"the runner finished before {target} fills"
    runner = _runner(db_url, crashed, dataset)
    _, err = runner.communicate(timeout=240)
    assert runner.returncode == 0, f"the final runner failed: {err.decode()[-2000:]}"

    got, want = ledger_log(engine, crashed), ledger_log(reference_engine, reference)
    assert got["fills"] == want["fills"]
    assert got["marks"] == want["marks"]
    assert got["decisions"] == want["decisions"]
    with Session(engine) as session:
        assert session.get(CohortRow, crashed).status == "completed"  # type: ignore[union-attr]
    assert_ledgers_reconcile(engine, crashed)
    engine.dispose()
    reference_engine.dispose()


def _kill_at(
    runner: subprocess.Popen[bytes], engine: Engine, cohort_id: str, target: int, rng: random.Random
) -> bool:
    """SIGKILL the runner once the cohort's fill log holds ``target`` fills (plus a random few
    milliseconds, to land inside transactions); False if it exited first."""
    while runner.poll() is None and fill_count(engine, cohort_id) < target:
        time.sleep(0.005)
    time.sleep(rng.uniform(0, 0.03))
    if runner.poll() is not None:
        return False
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    return True
