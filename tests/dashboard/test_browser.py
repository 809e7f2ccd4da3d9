"""The real thing: ``arena dashboard`` as a subprocess, every page opened in headless Chromium.

Screenshots land in ``artifacts/screenshots/`` (git-ignored) for a human to look at. Skipped only
when Debian's ``/usr/bin/chromium`` is absent on a developer's machine; under ``CI=true`` that is a
failure (``.ci/run`` installs it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dashboard.conftest import PLANTED
from tests.dashboard.server import ARGS, CHROMIUM, ROOT, dashboard, require_chromium, settled
from tests.dashboard.world import REPLAY

SHOTS = ROOT / "artifacts" / "screenshots"
# path, heading, text that must be on the page, charts expected
PAGES = [
    ("", "Leaderboard", "What these numbers mean", 1),
    ("cohort", "Cohort · Replay demo", "Errors and rejected decisions", 3),
    ("agent", "Agent", "Decisions", 3),
    ("markets", "Markets", "5 of 5 markets", 1),
    ("calibration", "Calibration", "Reliability", 1),
]

pytestmark = require_chromium()


@pytest.fixture
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
