"""What a user sees at 1400 x 900 in headless Chromium: tables that fit, deltas by sign, readable
charts, links that reopen what was shown.

``arena dashboard`` runs as a real subprocess on the seeded world (``tests/dashboard/world.py``).
A table "fits" when its grid needs no sideways scroll inside the main column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlmodel import Session

from arena.db.models import MarketRow
from tests.dashboard.conftest import PLANTED, world_copy
from tests.dashboard.server import ARGS, CHROMIUM, dashboard, require_chromium
from tests.dashboard.world import REPLAY

pytestmark = require_chromium()
WORD_JOINER = "\u2060"  # escaped text defuses colons with it
IDLE = "() => !document.querySelector('[data-testid=stStatusWidget]')"
SIDEWAYS = "e => e.scrollWidth > e.clientWidth + 1"


@pytest.fixture(scope="module")
def served(world_url: str) -> Iterator[str]:
    with dashboard(world_url, {"OPENROUTER_API_KEY": PLANTED}) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


def _open(browser: Any, url: str, heading: str) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    page.wait_for_selector(f"h1:has-text('{heading}')", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    page.wait_for_timeout(1_000)
    return page


def _fits(table: Any) -> list[str]:
    """The grid's headers, after checking it lies within the window and needs no sideways scroll."""
    table.scroll_into_view_if_needed()
    table.locator("[role=columnheader]").first.wait_for(state="attached", timeout=30_000)
    box = table.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1400
    assert not table.locator(".dvn-scroller").evaluate(SIDEWAYS), table.locator(".dvn-scroller").evaluate(
        "e => `the table scrolls sideways: ${e.scrollWidth} > ${e.clientWidth}`"
    )
    return [str(h) for h in table.locator("[role=columnheader]").all_inner_texts()]


def _picker(page: Any, label: str) -> Any:
    """The main column's select box labelled ``label``."""
    boxes = page.locator("[data-testid=stMain] [data-testid=stSelectbox]")
    return boxes.filter(has=page.get_by_text(label, exact=True))


def _choose(page: Any, label: str, option: str) -> None:
    """Pick ``option`` in the select box labelled ``label``, and wait for the rerun."""
    _picker(page, label).locator("[role=combobox]").click()
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_timeout(500)
    page.wait_for_function(IDLE, timeout=60_000)


def test_leaderboard_ranked_by_the_stated_brier_still_fits(served: str, browser: Any) -> None:
    page = _open(browser, f"{served}/?cohort={REPLAY}", "Leaderboard")
    headers = _fits(page.locator("[data-testid=stDataFrame]").first)
    assert headers[2:7] == ["Role", "Return %", "Return reads", "Brier (bets)", "Brier reads"]
    _choose(page, "Rank by", "Brier (stated)")
    table = page.locator("[data-testid=stDataFrame]").first
    ranked = table.locator("[role=columnheader]", has_text=re.compile(r"^Brier \(stated\)$"))
    ranked.wait_for(state="attached", timeout=30_000)  # the grid redraws its header after the rerun
    headers = _fits(table)
    assert headers[-1] == "Brier (stated)"
    # Notes name columns as the table titles them.
    text = page.inner_text("[data-testid=stMainBlockContainer]").replace(WORD_JOINER, "")
    assert "Brier (stated, imputed): stated Brier" in text and "Stated imputed" not in text
    page.close()


def test_leaderboard_opens_on_its_table_without_plotly_and_draws_the_chart_on_demand(
    served: str, browser: Any
) -> None:
    """The first page loads no chart script (it parses for seconds and holds the table back);
    the Chart tab draws the chart inside the window, and the Table tab brings the table back."""
    page = _open(browser, f"{served}/?cohort={REPLAY}", "Leaderboard")
    _fits(page.locator("[data-testid=stDataFrame]").first)
    loaded = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    assert not [name for name in loaded if "PlotlyChart" in name]
    page.get_by_role("tab", name="Chart").click()
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.locator(".main-svg").first.wait_for(timeout=60_000)
    box = chart.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1400
    assert "gpt-4o" in chart.inner_text()
    page.get_by_role("tab", name="Table").click()
    page.wait_for_function(IDLE, timeout=60_000)
    assert _fits(page.locator("[data-testid=stDataFrame]:visible").first)[1] == "Agent"
    page.close()


def test_pooled_leaderboard_fits_with_its_adjusted_columns(served: str, browser: Any) -> None:
    page = _open(browser, f"{served}/?cohort=__all__", "Leaderboard")
    headers = _fits(page.locator("[data-testid=stDataFrame]").first)
    assert {"Brier (bets, adjusted)", "Brier (stated, adjusted)"} <= set(headers), headers
    page.close()


def test_agent_page_shows_a_loss_red_and_down_and_keeps_the_agent_in_the_address(
    served: str, browser: Any
) -> None:
    page = _open(browser, f"{served}/agent?cohort={REPLAY}&agent=claude", "Agent")
    assert (
        _picker(page, "Agent").locator("input").input_value() == "claude"
    )  # the link opened the agent it names
    value = page.locator("[data-testid=stMetric]").filter(has_text="Value")
    delta = value.locator("[data-testid=stMetricDelta]")
    assert delta.inner_text().strip().startswith("−$")  # claude lost money
    assert value.locator("[data-testid=stMetricDeltaIcon-Down]").count() == 1
    red, green, _ = (int(c) for c in re.findall(r"\d+", delta.evaluate("e => getComputedStyle(e).color"))[:3])
    assert red > green, "a loss is drawn red"

    _choose(page, "Agent", "gpt-4o")
    assert "agent=gpt-4o" in page.url
    page.reload()
    page.wait_for_selector("h1:has-text('Agent')", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)
    assert _picker(page, "Agent").locator("input").input_value() == "gpt-4o"
    gained = page.locator("[data-testid=stMetric]").filter(has_text="Value")
    gained.locator("[data-testid=stMetricDeltaIcon-Up]").wait_for(timeout=30_000)  # gpt-4o gained

    for tab in page.locator("[data-baseweb=tab]").all():  # open, then closed and settled
        tab.click()
        page.wait_for_timeout(500)
        _fits(page.locator("[data-testid=stTabs] [data-testid=stDataFrame]:visible").first)
    newest = page.locator("[data-testid=stExpander]").first  # the newest round, with tool calls
    newest.locator("summary").click()
    calls = newest.locator("[data-testid=stDataFrame]").last
    assert _fits(calls)[-2:] == ["Arguments", "Result"]
    page.close()


def test_cohort_page_wraps_errors_counts_whole_agents_and_shows_the_config_as_toml(
    served: str, browser: Any
) -> None:
    page = _open(browser, f"{served}/cohort?cohort={REPLAY}", "Cohort")
    errors = page.locator("[data-testid=stDataFrame]").last
    assert _fits(errors)[-1] == "Message"
    rounds = page.locator("[data-testid=stPlotlyChart]:has-text('Decisions per round')")
    ticks = rounds.locator(".ytick text").evaluate_all("els => els.map(e => e.textContent)")
    assert ticks and all(t.isdigit() for t in ticks), ticks  # no 0.5 agent
    page.get_by_text("Frozen configuration (secrets redacted)").click()
    code = page.locator("[data-testid=stExpander] [data-testid=stCode]")
    code.wait_for(timeout=10_000)
    text = code.inner_text()
    assert "[rules]" in text and "[[agents]]" in text and "{" not in text.split("\n")[0]
    assert PLANTED not in page.content()
    page.close()


def test_compare_page_draws_no_empty_panel_and_says_when_neither_stated(served: str, browser: Any) -> None:
    page = _open(browser, f"{served}/compare?cohort={REPLAY}", "Compare two agents")
    _choose(page, "First agent", "random")
    _choose(page, "Second agent", "broken-bot")
    text = page.inner_text("[data-testid=stMainBlockContainer]")
    assert "Neither random nor broken-bot stated a probability" in text
    # The cohort's scores (the pooled cohorts' follow, under the same title).
    scores = page.locator("[data-testid=stPlotlyChart]:has-text('Scores with 95% intervals')").first
    scores.locator(".annotation-text").first.wait_for(state="attached", timeout=30_000)
    titles = scores.locator(".annotation-text").evaluate_all("els => els.map(e => e.textContent)")
    assert titles and not any("stated" in t or "Log score" in t for t in titles), titles
    # Every panel drawn holds a marker: no blank band.
    assert scores.locator(".scatterlayer .trace").count() >= len(titles)
    page.close()


def test_compare_and_decision_tables_fit(served: str, browser: Any) -> None:
    page = _open(browser, f"{served}/compare?cohort={REPLAY}", "Compare two agents")
    _choose(page, "First agent", "gpt-4o")
    page.wait_for_timeout(1_500)  # the first pick may rerun the page once more, resetting the second
    page.wait_for_function(IDLE, timeout=60_000)
    _choose(page, "Second agent", "claude")
    page.locator("[role=columnheader]", has_text="Second: claude").first.wait_for(
        state="attached", timeout=30_000
    )
    tables = page.locator("[data-testid=stMainBlockContainer] [data-testid=stDataFrame]")
    assert tables.count() >= 2, page.inner_text("[data-testid=stMainBlockContainer]")[-1500:]
    assert _fits(tables.first)[:3] == ["Metric", "First: gpt-4o", "Second: claude"]
    assert _fits(tables.last)[-2:] == ["Resolution", "Who was right"]
    page.close()
    page = _open(browser, f"{served}/agent?cohort={REPLAY}&agent=claude", "Agent")
    for decision in page.locator("[data-testid=stExpander]").all():  # each round's decision
        decision.locator("summary").click()
        page.wait_for_timeout(300)
        for table in decision.locator("[data-testid=stDataFrame]").all():
            headers = _fits(table)
            assert "Stated probability" not in headers or "Id" not in headers  # markets by question
    page.close()


def test_calibration_all_draws_each_source_in_its_own_colour(served: str, browser: Any) -> None:
    page = _open(browser, f"{served}/calibration?cohort={REPLAY}", "Calibration")
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.scroll_into_view_if_needed()
    legend = chart.locator(".legend .traces")
    names = legend.all_inner_texts()
    assert len(names) == 3
    colours = {p.evaluate("e => e.style.stroke") for p in chart.locator(".legend .traces .js-line").all()}
    assert len(colours) == 3, colours
    text = page.inner_text("[data-testid=stMainBlockContainer]")
    assert "implied_kelly" not in text
    page.close()


def test_markets_page_labels_the_last_price_and_hides_an_empty_category(
    world_url: str, tmp_path: Path, browser: Any
) -> None:
    def no_categories(session: Session) -> None:
        session.execute(update(MarketRow).values(category=None))

    url = world_copy(world_url, tmp_path / "arena.db", no_categories)
    with dashboard(url) as base:
        page = _open(browser, f"{base}/markets?cohort={REPLAY}", "Markets")
        headers = _fits(page.locator("[data-testid=stDataFrame]").first)
        assert "Category" not in headers and headers[2:4] == ["Last YES price", "Price as of"]
        labels = page.locator("[data-testid=stMainBlockContainer] label").all_inner_texts()
        assert "Category" not in labels and "Venue" in labels
        page.close()
