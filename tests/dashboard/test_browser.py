"""The real thing: ``arena dashboard`` as a subprocess, every page opened in headless Chromium.

Screenshots land in ``artifacts/screenshots/`` (git-ignored) for a human to look at. Skipped only
when Debian's ``/usr/bin/chromium`` is absent on a developer's machine; under ``CI=true`` that is a
failure (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dashboard.conftest import PLANTED
from tests.dashboard.server import ARGS, CHROMIUM, ROOT, dashboard, require_chromium, settled
from tests.dashboard.world import REPLAY

SHOTS = ROOT / "artifacts" / "screenshots"
# path, heading, text that must be on the page, charts expected
PAGES = [
    ("", "Leaderboard", "What these numbers mean", 0),  # its chart is a tab of its own
    ("cohort", "Cohort · Replay demo", "Errors and rejected decisions", 3),
    ("agent", "Agent", "Decisions", 3),
    ("markets", "Markets", "5 of 5 markets", 1),
    ("calibration", "Calibration", "Reliability", 1),
]

pytestmark = require_chromium()


@pytest.fixture(scope="module")
def served(world_url: str) -> Iterator[str]:
    with dashboard(world_url, {"OPENROUTER_API_KEY": PLANTED}) as base:
        yield base


def test_every_page_renders_in_a_real_browser(served: str) -> None:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        for path, heading, marker, charts in PAGES:
            page.goto(f"{served}/{path}?cohort={REPLAY}")
            page.wait_for_selector(f"h1:has-text('{heading}')", timeout=60_000)
            page.wait_for_function(settled(charts), timeout=60_000)
            page.wait_for_timeout(1_500)  # plotly finishes drawing
            page.screenshot(path=str(SHOTS / f"{path or 'leaderboard'}.png"))
            text = page.inner_text("body")
            assert marker in text, path
            assert "Traceback" not in text and page.locator("[data-testid=stException]").count() == 0, path
            assert page.locator("[data-testid=stPlotlyChart] .main-svg").count() >= charts, path
            assert PLANTED not in page.content(), path
        browser.close()


KEY_HEADERS = [
    "#", "Agent", "Role", "Return %", "Return reads", "Brier (bets)", "Brier reads",
    "Brier (stated, imputed)", "Tournament take",
]  # fmt: skip
# Widgets and text of the main column reaching past its right edge, and sidebar inputs whose
# text is wider than the box (a cut name). Tables scroll inside their own frame: checked apart.
OVERFLOWING = """() => {
  const main = document.querySelector('[data-testid=stMainBlockContainer]').getBoundingClientRect();
  const past = [...document.querySelectorAll('[data-testid=stMainBlockContainer] *')]
    .filter(e => !e.closest('[data-testid=stDataFrame], [data-testid=stPlotlyChart]'))
    .filter(e => e.getBoundingClientRect().right > main.right + 1).map(e => e.textContent.slice(0, 40));
  const cut = [...document.querySelectorAll('[data-testid=stSidebar] input')]
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.value);
  return [...past, ...cut];
}"""


def test_leaderboard_key_figures_and_cohort_name_fit_a_1400_px_window(served: str) -> None:
    """At 1400 x 900 the compact table needs no sideways scroll and shows every key header, no
    widget overflows its column (the chart picker did), and the sidebar shows the cohort name."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{served}/?cohort={REPLAY}")
        page.wait_for_function(settled(0), timeout=60_000)
        table = page.locator("[data-testid=stDataFrame]").first
        table.scroll_into_view_if_needed()
        page.wait_for_timeout(500)  # the grid draws its header
        box = table.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1400
        scroller = table.locator(".dvn-scroller")
        assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the table scrolls sideways"
        # The grid draws on a canvas; its accessible header row lists the columns it drew.
        headers = table.locator("[role=columnheader]").all_inner_texts()
        assert headers == KEY_HEADERS
        assert page.evaluate(OVERFLOWING) == []
        picker = page.locator("[data-testid=stSidebar] input[role=combobox]")
        assert picker.input_value() == "Replay demo"  # the name, not cut behind a long id
        assert REPLAY in page.locator("[data-testid=stSidebar]").inner_text()  # the id, wrapped below
        browser.close()


def test_screenshot_script_writes_the_leaderboard_picture(world_url: str, tmp_path: Path) -> None:
    """``scripts/screenshot.py`` (the README's picture) on a given database: a 1400-px-wide PNG
    that ends under the leaderboard table,."""
    out = tmp_path / "dashboard.png"
    script = [sys.executable, str(ROOT / "scripts" / "screenshot.py")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [*script, "--database-url", world_url, "--out", str(out)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    header = out.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert width == 1400 and 600 < height < 1600
