"""The "Compare cohorts" page, run with Streamlit's AppTest on cohorts replayed through the CLI:
the same comparison as `arena compare` (one function computes both), as a table and verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.reports.escaping import WORD_JOINER
from tests.commands.cohort_pairs import replayed
from tests.dashboard.conftest import PLANTED, Runner, screen_text


@pytest.fixture(scope="module")
def world(sqlite_head: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    return replayed(sqlite_head, tmp_path_factory.mktemp("compare-page"))


def test_the_page_shows_the_cli_comparison_with_its_verdicts(
    dashboard: Runner, world: tuple[str, dict[str, str]]
) -> None:
    url, ids = world
    chosen = [ids["reference"], ids["shifted"]]
    page = dashboard(url)("compare_cohorts", compare_cohorts=chosen)
    assert [e.value for e in page.exception] == []
    assert page.title[0].value == "Compare cohorts"
    table = page.dataframe[0].value
    assert list(table.columns) == [
        "Agent", "Cohort", "Metric", "A", "Value", "Difference", "95% interval", "Common markets", "Verdict",
    ]  # fmt: skip
    cli = json.loads(CliRunner().invoke(app, ["compare", *chosen, "--json", "--database-url", url]).stdout)
    expected = [(r["agent"], r["label"], r["common_markets"], r["verdict"]) for r in cli["comparisons"]]
    shown = list(zip(table["Agent"], table["Metric"], table["Common markets"], table["Verdict"], strict=True))
    assert shown == expected
    stated = table[(table["Agent"] == "s") & (table["Metric"] == "Brier (stated)")].iloc[0]
    cli_stated = next(r for r in cli["comparisons"] if r["agent"] == "s" and r["metric"] == "stated_brier")
    assert stated["Difference"] == f"{cli_stated['diff']:+.3f}"
    assert PLANTED not in screen_text(page)
    shown_text = [m.value for m in page.markdown] + [c.value for c in page.caption]
    text = "\n".join(shown_text).replace(WORD_JOINER, "").replace("\\", "")
    assert "only 6 common markets (at least 30 resolved ones needed): no conclusion" in text
    assert "6 markets bet or stated on in every cohort" in text


def test_cohorts_without_a_common_market_are_one_error(
    dashboard: Runner, world: tuple[str, dict[str, str]]
) -> None:
    url, ids = world
    page = dashboard(url)("compare_cohorts", compare_cohorts=[ids["reference"], ids["idle"]])
    assert [e.value for e in page.exception] == []
    (error,) = page.error
    assert "have no market in common" in error.value
    assert not page.dataframe
