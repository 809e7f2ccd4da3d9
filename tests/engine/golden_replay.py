"""A fingerprint of everything the demo cohort's replay stores and reports, to prove that making
the replay faster changes none of it.

The demo cohort (``data/configs/demo-baselines.toml`` on the bundled dataset) is replayed through
``arena replay`` as a user runs it; then every report table (``arena report``'s ``tables/``,
written as CSV exactly as the report writes them) and ``arena leaderboard --json`` are hashed.
What legitimately differs from run to run is normalised first: the cohort id, and the columns
stamped by the wall clock (``claimed_at``, ``created_at``, ``latency_s``).
Database ids are kept: they record commit order, which must not move either. Money and prices are
exact decimals and are compared byte for byte; binary floats (the statistics: Brier scores,
bootstrap intervals, calibration) are compared to 10 significant digits, because the bootstrap's
matrix products go through BLAS, whose kernels sum in an order that depends on the CPU and its
thread count, which moves the 16th digit from one machine to the next.

The stored fingerprints are ``golden/demo_replay.json``, one per backend (PostgreSQL stores JSON
columns with its own key order and spacing). Regenerate them only for a change meant to alter
results: ``ARENA_WRITE_GOLDEN=1 pytest tests/engine/test_replay_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
from sqlalchemy import Engine
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.commands.demo import DEMO_CONFIG
from arena.db.models import CohortRow
from arena.reports.bundle import CSV_TIME
from arena.reports.content import gather
from arena.reports.redact import Redactor

GOLDEN = Path(__file__).resolve().parent / "golden" / "demo_replay.json"
WALL_CLOCK_COLUMNS = ("claimed_at", "created_at", "latency_s")  # stamped by the wall clock
FLOAT_DIGITS = 10  # significant digits of a binary float that must match (see the module docstring)


def demo_fingerprint(engine: Engine) -> dict[str, Any]:
    """Replay the demo cohort into ``engine`` (an empty database) and fingerprint what it stored."""
    url = engine.url.render_as_string(hide_password=False)
    runner = CliRunner()
    done = runner.invoke(app, ["replay", str(DEMO_CONFIG), "--database-url", url])
    assert done.exit_code == 0, done.output
    with Session(engine) as session:
        (cohort_id,) = session.exec(select(CohortRow.id)).all()
    tables = gather(engine, cohort_id, prompts=True, redactor=Redactor.from_environ({})).tables
    board = runner.invoke(app, ["leaderboard", "--json", "--cohort", cohort_id, "--database-url", url])
    assert board.exit_code == 0, board.output
    fingerprint = {name: _table_print(frame, cohort_id) for name, frame in sorted(tables.items())}
    fingerprint["leaderboard.json"] = _digest(_without_clock(json.loads(board.stdout)), cohort_id)
    return fingerprint


def _table_print(frame: pl.DataFrame, cohort_id: str) -> dict[str, Any]:
    kept = frame.drop([c for c in WALL_CLOCK_COLUMNS if c in frame.columns])
    text = kept.write_csv(datetime_format=CSV_TIME, float_scientific=True, float_precision=FLOAT_DIGITS - 1)
    return {"rows": frame.height, "sha256": _sha(text.replace(cohort_id, "COHORT"))}


def _without_clock(document: Any) -> Any:
    """The leaderboard document less its creation time (the only wall-clock field), its floats
    to ``FLOAT_DIGITS`` significant digits."""
    if isinstance(document, dict):
        return {k: _without_clock(v) for k, v in document.items() if k not in ("created_at", "generated_at")}
    if isinstance(document, list):
        return [_without_clock(v) for v in document]
    if isinstance(document, float):
        return float(f"{document:.{FLOAT_DIGITS}g}")
    return document


def _digest(document: Any, cohort_id: str) -> dict[str, Any]:
    text = json.dumps(document, sort_keys=True).replace(cohort_id, "COHORT")
    return {"rows": len(document.get("agents", [])), "sha256": _sha(text)}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
