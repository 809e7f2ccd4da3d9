"""``arena dashboard``: the Streamlit command it runs, and its one-line errors."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

from arena.commands import dashboard


def test_streamlit_runs_the_app_headless_on_loopback_by_default() -> None:
    command = dashboard.streamlit_command("127.0.0.1", 8501)
    assert command[1:4] == ["-m", "dashboard.launch", "run"] and Path(command[4]) == dashboard.APP
    assert dashboard.APP.is_file()
    options = dict(zip(command[5::2], command[6::2], strict=True))
    assert options["--server.address"] == "127.0.0.1" and options["--server.port"] == "8501"
    assert options["--server.headless"] == "true" and options["--browser.gatherUsageStats"] == "false"
    assert options["--server.fileWatcherType"] == "none"  # no per-session walk of every loaded module


def test_default_host_is_loopback() -> None:
    app = typer.Typer()
    dashboard.register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["dashboard", "--help"])
    assert result.exit_code == 0 and "127.0.0.1" in result.output and "8501" in result.output


def test_a_bad_database_url_is_a_one_line_error() -> None:
    app = typer.Typer()
    dashboard.register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["dashboard", "--database-url", "mysql://u:pw@host/db"])
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == "error: database URL mysql://u:***@host/db: expected a sqlite:// or postgresql:// URL"
    )


def test_the_preload_imports_the_pages_modules_once_streamlit_runs_and_not_pandas(tmp_path: Path) -> None:
    """``dashboard.launch`` imports what the first page needs; neither pandas nor the ORM (the
    first page reads through light Core tables), each half a second. The modules declaring
    Streamlit caches wait for Streamlit's runtime (before it, each would log a warning); once
    imported, they are frozen out of the garbage collections Streamlit runs after each page."""
    script = (
        "import gc, sys; from dashboard import launch\n"
        "def show(): print(sorted(sys.modules)); print(gc.get_freeze_count())\n"
        "launch.RUNTIME_WAIT_SECONDS = 0; launch.preload(); show()\n"
        "launch.preload(lambda: True); show()"
    )
    env = {**os.environ, "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'none.db'}"}  # nothing to warm
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, frozen_before, after, frozen_after = (ast.literal_eval(line) for line in done.stdout.splitlines())
    assert {"arena.scoring", "sqlalchemy", "polars", "pyarrow"} <= set(before)
    assert "dashboard.queries" not in before and {"dashboard.queries", "dashboard.widgets"} <= set(after)
    assert not {"pandas", "sqlmodel", "sqlalchemy.orm", "arena.db.models"} & set(after)
    assert frozen_before == 0 and frozen_after > 10_000
