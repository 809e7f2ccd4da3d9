"""The dashboard and report.html of a cohort full of hostile text, in headless Chromium.

After every page: the loopback tracker saw no request, no script ran (``window.__pwned`` unset,
no dialog), nothing overflows the page sideways, and the hostile text is on the page as text.
Screenshots land in ``artifacts/screenshots/hostile/``.
"""

from __future__ import annotations

from pathlib import Path

from arena.reports.escaping import WORD_JOINER
from tests.dashboard.server import ARGS, CHROMIUM, ROOT, dashboard, require_chromium
from tests.safety.conftest import Tracker

SHOTS = ROOT / "artifacts" / "screenshots" / "hostile"
NO_OVERFLOW = "() => document.documentElement.scrollWidth <= window.innerWidth + 1"

pytestmark = require_chromium()


def test_dashboard_and_report_show_hostile_text_as_text(
    cohort: tuple[str, str, Path], tracker: Tracker
) -> None:
    from playwright.sync_api import Page, sync_playwright

    url, cohort_id, report = cohort
    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs: list[str] = []

    def check(page: Page, shot: str) -> None:
        page.wait_for_timeout(1_500)  # images, styles and plotly would have loaded by now
        page.screenshot(path=str(SHOTS / f"{shot}.png"), timeout=120_000)
        assert tracker.hits == [], shot
        assert page.evaluate("() => window.__pwned === undefined"), shot
        assert dialogs == [], shot
        assert page.evaluate(NO_OVERFLOW), shot
        assert page.locator("[data-testid=stException]").count() == 0, shot

    with dashboard(url) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for path, heading in (
            ("", "Leaderboard"),
            ("cohort", "Cohort"),
            ("markets", "Markets"),
            ("calibration", "Calibration"),
        ):
            page.goto(f"{base}/{path}?cohort={cohort_id}")
            page.wait_for_selector(f"h1:has-text('{heading}')", timeout=60_000)
            page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')")
            check(page, path or "leaderboard")
            if not path:  # agent names in the chart too
                page.get_by_role("tab", name="Chart").click()
                page.wait_for_selector("[data-testid=stPlotlyChart] .main-svg", timeout=60_000)
                check(page, "leaderboard-chart")
            if path == "cohort":  # the name, shown as written
                title = page.locator("h1:has-text('Cohort')")
                assert "![n](" + tracker.url in title.inner_text().replace(WORD_JOINER, "")
                # Streamlit adds the heading's own "#" anchor; nothing else may be a link or image.
                assert title.locator("a[href*='127.0.0.1'], img").count() == 0
        page.goto(f"{base}/agent?cohort={cohort_id}")
        page.wait_for_selector("h1:has-text('Agent')", timeout=60_000)
        # The hostile bot failed (most of its answers invalid), so it is listed last: pick it.
        page.locator("[data-testid=stSelectbox]").filter(has_text="Agent").click(timeout=60_000)
        page.keyboard.type("hostile")
        page.keyboard.press("Enter")
        page.wait_for_selector("[data-testid=stCaptionContainer]:has-text('plugin')", timeout=60_000)
        # Every market resolved, so nothing is open: the positions open on what the bot held.
        assert page.get_by_role("tab").first.inner_text(timeout=60_000).startswith("Closed and settled")
        for index in (0, 2, 15):  # a script tag, a Markdown image in an error, 100 KB of reasoning
            page.locator(f"[data-testid=stExpander] summary:has-text('Round {index} ·')").click(
                timeout=60_000
            )
        check(page, "agent")
        body = page.inner_text("body").replace(WORD_JOINER, "")
        assert f"![t]({tracker.url}/track.png?leak=1)" in body  # reasoning, as plain text
        assert "<script>" in body
        page.goto((report / "report.html").as_uri())
        check(page, "report")
        assert "![n](" + tracker.url in page.locator("h1").first.inner_text()
        browser.close()
