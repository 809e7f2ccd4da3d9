"""One database, the same bytes: `arena leaderboard --json` and the report's tables, run twice."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine
from typer.testing import CliRunner

from arena.cli import app
from arena.core.clock import SimulatedClock
from arena.reports.bundle import build_report
from tests.dashboard.world import REPLAY


def test_leaderboard_json_is_byte_identical_run_to_run(world: Engine) -> None:
    url = world.url.render_as_string(hide_password=False)
    runs = [
        CliRunner().invoke(app, ["leaderboard", "--json", "--replicates", "300", "--database-url", url])
        for _ in range(3)
    ]
    assert all(run.exit_code == 0 for run in runs), runs[0].output
    assert runs[0].stdout_bytes == runs[1].stdout_bytes == runs[2].stdout_bytes
    assert b'"deployed_share"' in runs[0].stdout_bytes


def test_report_tables_are_byte_identical_run_to_run(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    folders = [
        build_report(world, REPLAY, tmp_path / name, clock=clock, environ=os.environ, make_zip=False).folder
        for name in ("one", "two")
    ]
    for name in ("report.md", "tables/scores.csv", "tables/calibration.csv", "tables/breakdowns.csv"):
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name
