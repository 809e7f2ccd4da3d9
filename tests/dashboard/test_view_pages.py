"""The comparison pages (Compare two agents, Per market, Cost vs score) on the seeded world, with AppTest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import update

from arena.db.models import DecisionRow
from dashboard.widgets import ALL
from tests.dashboard.conftest import PLANTED, Runner, screen_text, world_copy
from tests.dashboard.world import LIVE, REPLAY

Dashboard = Callable[[str], Runner]
PAGES = ("compare", "market_view", "cost_vs_score")


@pytest.fixture
def page(dashboard: Dashboard, world_url: str) -> Runner:
    return dashboard(world_url)


def _clean(app) -> str:  # type: ignore[no-untyped-def]
    assert [e.value for e in app.exception] == []
    text = screen_text(app)
    assert PLANTED not in text
    return text


def test_compare_shows_both_curves_scores_and_who_was_right(page: Runner) -> None:
    app = page("compare", cohort=REPLAY, compare_first="gpt-4o", compare_second="claude")
    text = _clean(app)
    assert app.title[0].value == "Compare two agents"
    # Equity curves, paired scores, and their Briers adjusted for market difficulty across both
    # cohorts of the world (gpt-4o sits in both).
    assert len(app.get("plotly_chart")) == 3
    assert "Across all cohorts, adjusted for market difficulty" in text
    scores = app.dataframe[0].value.set_index("Metric")
    stated = scores.loc["Brier (stated)"]
    assert stated["First: gpt-4o"] < stated["Second: claude"] and stated["First − second"] < 0
    assert stated["Common markets"] == 2 and stated["Note"] == "fewer than 30 common resolved markets"
    assert pd.isna(stated["p"])  # no p-value on two markets
    markets = app.dataframe[1].value.set_index("Question")
    assert markets["Who was right"].to_dict() == {
        "Will Bitcoin close above $100k on Jan 31?": "gpt-4o",
        "Will the Fed cut rates in March 2025?": "both",
    }
    btc = markets.loc["Will Bitcoin close above $100k on Jan 31?"]
    assert (btc["gpt-4o: side"], btc["gpt-4o: stake"], btc["claude: side"], btc["claude: stake"]) == (
        "YES", 500.0, "NO", 1000.0,
    )  # fmt: skip
    assert btc["claude: stated P(YES)"] == 0.35 and btc["Resolution"] == "YES"


def test_compare_picks_another_second_agent_when_the_first_takes_its_place(page: Runner) -> None:
    app = page("compare", cohort=REPLAY, compare_first="claude", compare_second="claude")
    _clean(app)
    assert app.selectbox(key="compare_second").value not in (None, "claude")


def test_compare_opens_on_the_agent_sharing_most_markets_with_the_leader(page: Runner) -> None:
    app = page("compare", cohort=REPLAY)
    _clean(app)
    # gpt-4o leads on return; random and claude both bet on its two resolved markets, random ranks higher.
    assert (app.selectbox(key="compare_first").value, app.selectbox(key="compare_second").value) == (
        "gpt-4o",
        "random",
    )
    assert len(app.dataframe) == 2  # the comparison and the markets both bet on


def test_per_market_shows_forecasts_bets_and_each_position(page: Runner) -> None:
    app = page("market_view", cohort=REPLAY)
    text = _clean(app)
    assert app.title[0].value == "Per market"
    assert app.selectbox(key="market_view_pick").value == "polymarket:btc-100k"  # most agents bet on it
    assert "Will Bitcoin close above $100k on Jan 31?" in [t.value for t in app.text]
    assert "Resolves per the official source." in text  # the description, its secret redacted
    figure = app.get("plotly_chart")[0].proto.spec
    assert "gpt-4o stated" in figure and "claude bets" in figure
    table = app.dataframe[0].value.set_index("Agent")
    assert table["Side"].to_dict() == {"claude": "NO", "gpt-4o": "YES", "random": "YES"}
    assert table["Right"].to_dict() == {"claude": "no", "gpt-4o": "yes", "random": "yes"}
    assert round(table.loc["claude", "P/L on this market"], 2) == -1000.0


def test_cost_vs_score_prices_each_point_or_says_why_not(page: Runner) -> None:
    app = page("cost_vs_score", cohort=REPLAY)
    _clean(app)
    assert app.title[0].value == "Cost vs score"
    assert len(app.get("plotly_chart")) == 2
    table = app.dataframe[0].value.set_index("Agent")
    assert table.index.tolist() == ["gpt-4o", "claude", "broken-bot"]  # baselines recorded no usage
    assert table.loc["gpt-4o", "$ per 1% of return"] == "$0.0094"  # $0.0494 / 5.25%
    assert table.loc["claude", "$ per 1% of return"] == "— no gain: -6.85% ≤ 0"
    assert table.loc["broken-bot", "$ per point vs 50%"] == "— no resolved bet"


def test_cost_vs_score_says_so_in_one_line_when_nobody_has_costs(
    dashboard: Dashboard, world_url: str, tmp_path: Path
) -> None:
    free = world_copy(
        world_url,
        tmp_path / "free.db",
        lambda s: s.execute(update(DecisionRow).values(cost_usd=0, prompt_tokens=0, completion_tokens=0)),
    )
    app = dashboard(free)("cost_vs_score", cohort=REPLAY)
    _clean(app)
    assert [i.value for i in app.info] == [
        "No agent here recorded model usage (tokens or cost), so there is no cost to weigh."
    ]
    assert len(app.get("plotly_chart")) == 0 and len(app.dataframe) == 0


@pytest.mark.parametrize("name", PAGES)
def test_without_cohorts_each_page_says_to_run_the_demo(
    name: str, dashboard: Dashboard, empty_url: str
) -> None:
    app = dashboard(empty_url)(name)
    _clean(app)
    assert any("The database has no cohorts yet." in i.value for i in app.info)


@pytest.mark.parametrize("name", PAGES[:2])
def test_pages_about_one_cohort_ask_for_one(name: str, page: Runner) -> None:
    app = page(name, cohort=ALL)
    _clean(app)
    assert [i.value for i in app.info] == ["This page shows one cohort at a time: pick one in the sidebar."]


@pytest.mark.parametrize("name", PAGES)
def test_a_live_cohort_without_resolved_bets_renders(name: str, page: Runner) -> None:
    app = page(name, cohort=LIVE)
    _clean(app)
    assert app.title[0].value in ("Compare two agents", "Per market", "Cost vs score")
