"""A dashboard page must not pull in pandas: its import alone takes most of a second on a cold
dashboard (the leaderboard's budget is 2 s on a million marks). Streamlit converts any table
that is not Arrow through pandas, so one stray ``st.dataframe(polars_frame)`` would bring it back."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dashboard.server import ARGS, CHROMIUM, dashboard
from tests.dashboard.world import REPLAY

REPO = Path(__file__).resolve().parents[2]
FAVICON = REPO / "dashboard" / "favicon.svg"  # the page icon dashboard/app.py sets
SCRIPT = f"""
import sys
from tests.dashboard.conftest import run_page
for page in ("leaderboard", "cohort", "agent", "markets", "calibration"):
    app = run_page(page, cohort={REPLAY!r})
    assert not app.exception, (page, [e.value for e in app.exception])
    assert len(app.dataframe) > 0, page  # the pages did show tables
    print(page, "pandas" in sys.modules)
"""


def test_no_page_imports_pandas(world_url: str) -> None:
    env = os.environ | {"ARENA_DATABASE_URL": world_url, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    pages = [line.split() for line in result.stdout.splitlines()]
    assert pages == [[p, "False"] for p in ("leaderboard", "cohort", "agent", "markets", "calibration")]


def _server_maps(port: str) -> str:
    """The memory map of the Streamlit process serving ``port``: the shared libraries it loaded."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"dashboard.launch" in argv and port.encode() in argv:
            return (proc / "maps").read_text()
    raise AssertionError(f"no dashboard.launch process serves port {port}")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")
def test_the_served_first_page_loads_no_pandas_and_asks_nothing_of_the_internet(world_url: str) -> None:
    """Beyond AppTest: a real server, whose Arrow tables Streamlit would inspect with pandas if
    they were sent lazily (AppTest always sends them whole). The page, its favicon included
    (a Material icon's would come from Google), is served by the dashboard alone."""
    from playwright.sync_api import sync_playwright

    with dashboard(world_url) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{base}/?cohort={REPLAY}")
        page.locator("[data-testid=stDataFrame] [role=columnheader]").first.wait_for(
            state="attached", timeout=60_000
        )
        icons = page.eval_on_selector_all("link[rel~=icon]", "links => links.map(link => link.href)")
        maps = _server_maps(base.rsplit(":", 1)[1])
        browser.close()
    assert "/pyarrow/" in maps  # the control: the map does show what the server loaded
    assert "/pandas/" not in maps
    assert requested  # the control: requests were seen
    assert [url for url in [*icons, *requested] if not url.startswith((base, "data:"))] == []
    assert [_svg(url) for url in icons] == [FAVICON.read_text(encoding="utf-8")]  # our icon, inline


def _svg(url: str) -> str:
    """The SVG text of a base64 ``data:image/svg+xml`` URL."""
    header, payload = url.split(",", 1)
    assert header == "data:image/svg+xml;base64", header
    return base64.b64decode(payload).decode("utf-8")
