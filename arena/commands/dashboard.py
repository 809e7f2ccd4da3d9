"""``arena dashboard``: serve the read-only Streamlit dashboard for an arena database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

import dashboard
from arena.commands.options import fail
from arena.commands.terminal import echo
from arena.core.settings import Settings
from arena.db.engine import normalize_url, redact_url

APP = Path(dashboard.__file__).resolve().parent / "app.py"


def register(app: typer.Typer) -> None:
    """Add ``arena dashboard`` to ``app``."""
    app.command("dashboard")(dashboard_command)


def dashboard_command(
    host: Annotated[
        str,
        typer.Option(help="Address to listen on. The default serves this machine only; 0.0.0.0 shares it."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8501,
    database_url: Annotated[
        str | None, typer.Option(help="Database URL (default: ARENA_DATABASE_URL or the local SQLite file).")
    ] = None,
) -> None:
    """Open the dashboard (leaderboard, cohorts, agents, markets, calibration) in your browser.

    It only reads the database, and refreshes itself while a live cohort is running.
    """
    url = database_url or Settings().db_url
    try:
        normalize_url(url)
    except ValueError as exc:
        fail(str(exc))
    echo(f"Dashboard for {redact_url(url)} on http://{host}:{port} — Ctrl-C to stop.")
    raise typer.Exit(_serve(url, host, port))


def streamlit_command(host: str, port: int) -> list[str]:
    """The dashboard's server command: ``streamlit run`` through ``dashboard.launch``, which
    imports the pages' modules while Streamlit starts."""
    return [sys.executable, "-m", "dashboard.launch", "run", str(APP), *streamlit_flags(host, port)]


def streamlit_flags(host: str, port: int) -> list[str]:
    """The flags ``streamlit run`` gets for the dashboard (headless: the user opens the URL)."""
    return [
        "--server.address", host,
        "--server.port", str(port),
        "--server.headless", "true",
        "--server.runOnSave", "false",
        # No source watching: each new session would walk every loaded module to watch its file.
        "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "minimal",
        "--theme.base", "light",
    ]  # fmt: skip


def _serve(url: str, host: str, port: int) -> int:
    """Run Streamlit until it exits; Ctrl-C or SIGTERM to this process stops it too (no orphan server)."""
    env = {**os.environ, "ARENA_DATABASE_URL": url}
    process = subprocess.Popen(streamlit_command(host, port), env=env)
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: process.terminate())
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        return process.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
