"""``arena dashboard``: the Streamlit command it runs, and its one-line errors."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.testing import CliRunner

from arena.commands import dashboard


def test_streamlit_runs_the_app_headless_on_loopback_by_default() -> None:
    command = dashboard.streamlit_command("127.0.0.1", 8501)
    assert command[1:4] == ["-m", "streamlit", "run"] and Path(command[4]) == dashboard.APP
    assert dashboard.APP.is_file()
    options = dict(zip(command[5::2], command[6::2], strict=True))
    assert options["--server.address"] == "127.0.0.1" and options["--server.port"] == "8501"
    assert options["--server.headless"] == "true" and options["--browser.gatherUsageStats"] == "false"


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
