"""The report reads like a paper's appendix: its tables fit the page at 1400×900 with one row per
agent, the complete metrics table is folded away and written to metrics.csv, and the config is
shown as the TOML of config.toml."""

from __future__ import annotations

import csv
import os
from html import escape
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from sqlalchemy import Engine

from arena.core.clock import SimulatedClock
from arena.reports.bundle import build_report
from arena.scoring.metrics.registry import METRICS
from tests.dashboard.server import ARGS, CHROMIUM, require_chromium
from tests.dashboard.world import REPLAY

AGENTS = ["gpt-4o", "market", "random", "claude", "broken-bot"]  # the world's replay, by rank


@pytest.fixture
def report(world: Engine, clock: SimulatedClock, tmp_path: Path) -> Path:
    return build_report(world, REPLAY, tmp_path / "report", clock=clock, environ=os.environ).folder


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_metrics_csv_holds_every_metric_of_every_agent(report: Path) -> None:
    with (report / "metrics.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["Key"] for r in rows] == [m.key for m in METRICS]
    assert list(rows[0]) == ["Metric", "Key", *AGENTS]
    by_key = {r["Key"]: r for r in rows}
    # As the report shows it; text a spreadsheet would run as a formula is quoted (csv_cells).
    assert (by_key["pnl"]["gpt-4o"], by_key["value"]["gpt-4o"]) == ("'+$525.42", "$10,525.42")
    assert all(r[agent] for r in rows for agent in AGENTS)  # a missing value reads "—", never empty


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_config_is_the_toml_of_config_toml(report: Path) -> None:
    page = (report / "report.html").read_text(encoding="utf-8")
    toml = (report / "config.toml").read_text(encoding="utf-8")
    assert f"<pre>{escape(toml)}</pre>" in page
    assert "[[agents]]" in toml and '"config_json"' not in page


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize("mark", require_chromium())
def test_the_page_has_no_sideways_scroll_and_shows_every_agent_row(report: Path, mark: object) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto((report / "report.html").as_uri())
            width = "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            scroll, client = page.evaluate(width)
            assert scroll <= client
            for section, columns in (("leaderboard", 8), ("scores", 9)):
                table = page.locator(f"#{section} table").first
                fits = table.evaluate(
                    "t => [t.scrollWidth, t.parentElement.clientWidth, t.rows[0].cells.length]"
                )
                assert fits[0] <= fits[1] and fits[2] <= columns, (section, fits)
                names = table.locator("tbody tr td.text")
                assert names.count() == len(AGENTS)
                for i, agent in enumerate(AGENTS):
                    cell = names.nth(i)
                    cell.scroll_into_view_if_needed()
                    assert cell.inner_text().startswith(agent)
                    box = cell.bounding_box()
                    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= client
            details = page.locator("#scores details")
            assert not details.evaluate("d => d.open")
            details.locator("summary").click()
            assert page.evaluate(width)[0] <= client  # the full table scrolls inside its own box
            assert details.locator("tbody tr").count() == len(METRICS)
        finally:
            browser.close()
