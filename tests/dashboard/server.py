"""``arena dashboard`` as a real subprocess on a free loopback port, and the Chromium to open it.

Shared by the page smoke test and the hostile-text test, which both drive the real thing.
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
import pytest

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
BROWSER_MISSING = "needs Debian chromium at /usr/bin/chromium (make browser-deps)"


def require_chromium() -> list[pytest.MarkDecorator]:
    """Marks for a browser test module: skipped on a developer's machine without chromium; under
    ``CI=true`` a missing browser fails the collection instead (CI must run these tests)."""
    if os.environ.get("CI") == "true" and not CHROMIUM.exists():
        pytest.fail(f"CI=true and the browser test {BROWSER_MISSING}", pytrace=False)
    return [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason=BROWSER_MISSING)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def dashboard(database_url: str, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Serve the dashboard on ``database_url``; yields its base URL, stops it (and checks) after."""
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "arena.cli",
        "dashboard",
        "--port",
        str(port),
        "--database-url",
        database_url,
    ]
    process = subprocess.Popen(
        args, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/_stcore/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        else:
            output = process.stdout.read1().decode() if process.stdout else ""
            pytest.fail(f"dashboard did not start: {output}")
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    with socket.socket() as probe:  # the Streamlit child is gone too: nothing listens on its port
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # closed connections may linger
        probe.bind(("127.0.0.1", port))
