"""``arena report``: the command writes the bundle, and fails in one line when it cannot."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from sqlalchemy import Engine
from typer.testing import CliRunner

from arena.commands import report
from tests.dashboard.world import REPLAY

SQLITE = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def _app() -> typer.Typer:
    app = typer.Typer()
    report.register(app)
    app.command("noop")(lambda: None)  # a second command, so `report` is addressed by name as in arena
    return app


@SQLITE
def test_report_command_writes_folder_and_zip(world: Engine, tmp_path: Path) -> None:
    out = tmp_path / "out" / "demo"
    url = world.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(
        _app(), ["report", REPLAY, "--out", str(out), "--database-url", url, "--no-prompts"]
    )

    assert result.exit_code == 0, result.output
    assert f"written to {out}" in result.output and "portfolio_snapshots 140" in result.output
    assert (out / "report.html").is_file() and out.with_name("demo.zip").is_file()


def test_missing_database_is_a_one_line_error_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "arena.db"
    result = CliRunner().invoke(
        _app(), ["report", REPLAY, "--out", str(tmp_path / "r"), "--database-url", f"sqlite:///{missing}"]
    )
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == f"error: No arena database at sqlite:///{missing} yet: run `arena demo` to create one."
    )
    assert not missing.parent.exists() and not (tmp_path / "r").exists()


@SQLITE
def test_unknown_cohort_is_a_one_line_error(world: Engine, tmp_path: Path) -> None:
    url = world.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(
        _app(), ["report", "nope", "--out", str(tmp_path / "r"), "--database-url", url]
    )
    assert result.exit_code == 2
    assert result.output.strip() == "error: no cohort with id 'nope' (see `arena cohort list`)"
