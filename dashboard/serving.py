"""``arena dashboard`` as a real subprocess on a free loopback port, and the Chromium that opens it.

Shared by the browser tests and ``scripts/screenshot.py`` (the README's screenshot), so both
drive exactly what a user runs: the CLI command, its Streamlit child, a headless Debian Chromium.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
# Headless, and quiet: no update checks or sync calls that would reach out of the machine.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
STARTUP_SECONDS = 60
# The page has settled: no "running" widget, and at least CHARTS plotly figures drawn.
SETTLED = """() => !document.querySelector('[data-testid=stStatusWidget]')
  && document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length >= CHARTS"""


def settled(charts: int) -> str:
    """A ``page.wait_for_function`` expression: the run finished and ``charts`` figures are drawn."""
    return SETTLED.replace("CHARTS", str(charts))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def healthy(base: str) -> bool:
    """Whether the Streamlit server at ``base`` answers its health check within a minute."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/_stcore/health", timeout=1).status_code == 200:
                return True
        except httpx.TransportError:
            time.sleep(0.3)
    return False


@contextmanager
def dashboard(database_url: str, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Serve the dashboard on ``database_url``; yields its base URL, stops it (and checks) after.

    Raises ``RuntimeError`` with the server's output when it is not healthy within a minute.
    """
    port = free_port()
    args = [sys.executable, "-m", "arena.cli", "dashboard", "--port", str(port)]
    args += ["--database-url", database_url]
    process = subprocess.Popen(
        args, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        if not healthy(base):
            process.send_signal(signal.SIGTERM)  # it stops its Streamlit child, so the pipe ends
            process.wait(timeout=30)
            output = process.stdout.read().decode(errors="replace") if process.stdout else ""
            raise RuntimeError(f"dashboard did not start within {STARTUP_SECONDS} s: {output}")
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    with socket.socket() as probe:  # the Streamlit child is gone too: nothing listens on its port
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # closed connections may linger
        probe.bind(("127.0.0.1", port))
