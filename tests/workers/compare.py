"""Comparing a disturbed queued run with an undisturbed ``arena replay`` of the same config."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.db.engine import make_engine
from arena.db.models import CohortRow
from tests.engine.ledger_log import assert_ledgers_reconcile, ledger_log
from tests.workers.study import ROOT, arena

TIMEOUT = 240


def run(*args: str) -> str:
    """An arena command to its end; it must succeed."""
    done = subprocess.run(
        arena(*args),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def cohort_named(engine: Engine, name: str) -> str:
    with Session(engine) as session:
        return session.exec(select(CohortRow.id).where(CohortRow.name == name)).one()


def reference(tmp_path: Path, config: Path, name: str) -> tuple[Engine, str]:
    """The undisturbed run: ``arena replay CONFIG`` on a SQLite file of its own."""
    url = f"sqlite:///{tmp_path / f'reference-{name}.db'}"
    run("replay", str(config), "--database-url", url)
    engine = make_engine(url)
    return engine, cohort_named(engine, name)


def same_as_reference(engine: Engine, cohort: str, undisturbed: tuple[Engine, str]) -> None:
    """The same fills, marks and decisions as the undisturbed run; the cohort completed; every
    ledger equals its fill log, with one decision per agent per round."""
    got, want = ledger_log(engine, cohort), ledger_log(*undisturbed)
    assert got["fills"] == want["fills"] and got["fills"]
    assert got["marks"] == want["marks"]
    assert got["decisions"] == want["decisions"]
    with Session(engine) as session:
        assert session.get(CohortRow, cohort).status == "completed"  # type: ignore[union-attr]
    assert_ledgers_reconcile(engine, cohort)
