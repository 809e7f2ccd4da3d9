"""The comparison pages in headless Chromium, on the world with a hostile question and description.

``arena dashboard`` runs as a real subprocess; each new page must show its heading and charts
with no exception box, the hostile market text must be on the page as text (never markup), and a
loopback tracker named by that text must see no request. Screenshots land in
``artifacts/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlmodel import col

from arena.db.engine import make_engine, session_scope
from arena.db.models import MarketRow
from tests.dashboard.conftest import PLANTED
from tests.dashboard.server import ARGS, CHROMIUM, ROOT, dashboard, require_chromium
from tests.dashboard.world import REPLAY
from tests.safety.conftest import Tracker
from tests.safety.corpus import hostile

SHOTS = ROOT / "artifacts" / "screenshots"
BTC = "polymarket:btc-100k"  # the market most agents bet on: the Per market page opens on it
# path, heading, charts expected
PAGES = [
    ("compare", "Compare two agents", 2),
    ("market_view", "Per market", 1),
    ("cost_vs_score", "Cost vs score", 2),
]
READY = """() => !document.querySelector('[data-testid=stStatusWidget]')
  && document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length >= CHARTS"""

pytestmark = require_chromium()


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    t = Tracker()
    t.thread.start()
    yield t
    t.server.shutdown()


def _hostile_world(world_url: str, folder: Path, tracker: str) -> tuple[str, str]:
    """A copy of the world whose BTC market has a hostile question and description."""
    question = " ".join(hostile(tracker)[:5])  # script, img onerror, Markdown image and links, svg
    path = folder / "hostile-world.db"
    shutil.copyfile(world_url.removeprefix("sqlite:///"), path)
    engine = make_engine(f"sqlite:///{path}")
    with session_scope(engine) as session:
        text = {"question": question, "description": " ".join(hostile(tracker)[5:9])}
        session.execute(update(MarketRow).where(col(MarketRow.id) == BTC).values(**text))
    engine.dispose()
    return f"sqlite:///{path}", question


def test_comparison_pages_render_and_show_hostile_text_as_text(
    world_url: str, tmp_path: Path, tracker: Tracker
) -> None:
    from playwright.sync_api import sync_playwright

    url, question = _hostile_world(world_url, tmp_path, tracker.url)
    SHOTS.mkdir(parents=True, exist_ok=True)
    dialogs: list[str] = []
    with dashboard(url, {"OPENROUTER_API_KEY": PLANTED}) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for path, heading, charts in PAGES:
            page.goto(f"{base}/{path}?cohort={REPLAY}")
            page.wait_for_selector(f"h1:has-text('{heading}')", timeout=60_000)
            page.wait_for_function(READY.replace("CHARTS", str(charts)), timeout=60_000)
            page.wait_for_timeout(1_500)  # plotly finishes drawing; images would have loaded
            page.screenshot(path=str(SHOTS / f"{path}.png"))
            body = page.inner_text("body")
            assert page.locator("[data-testid=stException]").count() == 0 and "Traceback" not in body, path
            assert page.locator("[data-testid=stPlotlyChart] .main-svg").count() >= charts, path
            assert PLANTED not in page.content(), path
            if path == "market_view":
                assert question in body  # the question, character for character
                page.get_by_text("Description").click()  # iframe, object, stylesheet, CSS background
                page.wait_for_timeout(1_000)
                assert hostile(tracker.url)[7] in page.inner_text("body")
                assert page.locator(f"img[src*='{tracker.url}'], a[href*='{tracker.url}']").count() == 0
            assert tracker.hits == [], path
            assert page.evaluate("() => window.__pwned === undefined") and dialogs == [], path
        browser.close()
