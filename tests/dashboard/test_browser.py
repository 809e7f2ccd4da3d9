"""The real thing: ``arena dashboard`` as a subprocess, every page opened in headless Chromium.

Screenshots land in ``artifacts/screenshots/`` (git-ignored) for a human to look at. Skipped only
when Debian's ``/usr/bin/chromium`` is absent on a developer's machine; under ``CI=true`` that is a
failure (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from arena.cli import app as cli
from tests.dashboard.conftest import PLANTED
from tests.dashboard.world import REPLAY

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
# path, heading, text that must be on the page, charts expected
PAGES = [
    ("", "Leaderboard", "What these numbers mean", 1),
    ("cohort", "Cohort · Replay demo", "Errors and rejected decisions", 3),
    ("agent", "Agent", "Decisions", 3),
    ("markets", "Markets", "5 of 5 markets", 1),
    ("calibration", "Calibration", "Reliability", 1),
]
READY = """() => !document.querySelector('[data-testid=stStatusWidget]')
  && document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length >= CHARTS"""

BROWSER_MISSING = "needs Debian chromium at /usr/bin/chromium (make browser-deps)"
if os.environ.get("CI") == "true" and not CHROMIUM.exists():
    pytest.fail(f"CI=true and the browser test {BROWSER_MISSING}", pytrace=False)  # a collection error

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason=BROWSER_MISSING)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _command(port: int, url: str) -> list[str]:
    """``arena dashboard`` through the real CLI, or through the command module until the CLI mounts it."""
    args = ["dashboard", "--port", str(port), "--database-url", url]
    if any(c.name == "dashboard" for c in cli.registered_commands):
        return [sys.executable, "-m", "arena.cli", *args]
    harness = "import typer; from arena.commands import dashboard as d; a = typer.Typer(); d.register(a); a()"
    return [sys.executable, "-c", harness, *args[1:]]


@pytest.fixture
def served(world_url: str) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "OPENROUTER_API_KEY": PLANTED}
    process = subprocess.Popen(
        _command(port, world_url), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
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
            pytest.fail(
                f"dashboard did not start: {process.stdout.read1().decode() if process.stdout else ''}"
            )  # type: ignore[union-attr]
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    with socket.socket() as probe:  # the Streamlit child is gone too: nothing listens on its port
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # closed connections may linger
        probe.bind(("127.0.0.1", port))


def test_every_page_renders_in_a_real_browser(served: str) -> None:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        for path, heading, marker, charts in PAGES:
            page.goto(f"{served}/{path}?cohort={REPLAY}")
            page.wait_for_selector(f"h1:has-text('{heading}')", timeout=60_000)
            page.wait_for_function(READY.replace("CHARTS", str(charts)), timeout=60_000)
            page.wait_for_timeout(1_500)  # plotly finishes drawing
            page.screenshot(path=str(SHOTS / f"{path or 'leaderboard'}.png"))
            text = page.inner_text("body")
            assert marker in text, path
            assert "Traceback" not in text and page.locator("[data-testid=stException]").count() == 0, path
            assert page.locator("[data-testid=stPlotlyChart] .main-svg").count() >= charts, path
            assert PLANTED not in page.content(), path
        browser.close()
