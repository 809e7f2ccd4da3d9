"""Every page of the dashboard, run with Streamlit's AppTest on the seeded world database."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import update

from arena.db.engine import make_engine, session_scope
from arena.db.models import CohortRow
from arena.reports.escaping import WORD_JOINER
from tests.dashboard.conftest import PLANTED, Runner, screen_text
from tests.dashboard.world import LIVE, OLD_CONFIG_SECRETS, REPLAY, plant_old_config_secrets

Dashboard = Callable[[str], Runner]


@pytest.fixture
def page(dashboard: Dashboard, world_url: str) -> Runner:
    return dashboard(world_url)


def _clean(app) -> str:  # type: ignore[no-untyped-def]
    """The page ran without an exception, and no secret reached the screen."""
    assert [e.value for e in app.exception] == []
    text = screen_text(app)
    assert PLANTED not in text
    return text


def test_leaderboard_ranks_every_agent_with_intervals_and_marks_baselines(page: Runner) -> None:
    app = page("leaderboard", cohort=REPLAY)
    _clean(app)

    assert app.title[0].value == "Leaderboard"
    table = app.dataframe[0].value
    # broken-bot never answered validly: failed, not ranked, listed after the working agents.
    assert table["Agent"].tolist() == ["gpt-4o", "market", "random", "claude", "broken-bot"]
    assert table.set_index("Agent")["#"].isna().tolist() == [False, False, False, False, True]
    role = table.set_index("Agent")["Role"].to_dict()
    assert (role["broken-bot"], role["market"], role["random"], role["gpt-4o"]) == (
        "FAILED", "baseline", "baseline", "agent",
    )  # fmt: skip
    # random's small bets read as less likely than their prices (fa): its Brier verdict is marked.
    words = table.set_index("Agent")[["Return reads", "Brier reads"]]
    assert words.loc["random", "Brier reads"].endswith(" ¶")
    assert words.loc["gpt-4o"].tolist() == ["Good", "Very Poor ¶"]
    # The headline verdicts, in reading order; return and Brier share a cell with their interval,
    # each followed by its verdict in words.
    assert list(table.columns) == [
        "#", "Agent", "Role", "Return %", "Return reads", "Brier (bets)", "Brier reads",
        "Brier (stated, imputed)", "Tournament take",
    ]  # fmt: skip
    assert table.set_index("Agent").loc["gpt-4o", "Return %"] == "+5.3% [0.3, 11.0]"
    assert [m.value for m in app.metric][:2] == ["gpt-4o", "+$525.42"]
    assert any("fewer than 30 resolved markets" in w.value for w in app.warning)
    # The chart and every metric run only once opened: the first page sends one table, no Plotly.
    assert len(app.get("plotly_chart")) == 0 and len(app.dataframe) == 1
    assert [e.label for e in app.expander] == ["Every metric", "What these numbers mean"]
    # gpt-4o and claude are LLMs of a replay cohort without knowledge_cutoff; market is a baseline.
    captions = [c.value.replace("\\", "").replace(WORD_JOINER, "") for c in app.caption]  # escaped
    assert "leakage guard: off for gpt-4o (replay LLM without knowledge_cutoff)" in captions
    # The ¶ of their verdicts opens one note, under the table, naming both with their figures.
    (incoherent,) = [c for c in captions if c.startswith("¶ ")]
    assert "(Brier, share of bets): gpt-4o (" in incoherent and "; random (" in incoherent
    # Notes name the columns as the table titles them, and only columns it shows.
    assert any(c.startswith("Brier (stated, imputed): stated Brier over every") for c in captions)
    assert not any(c.startswith("Stated imputed") for c in captions)
    app.session_state["leaderboard_every"] = True  # the user opens "Every metric"
    app.run()
    every = app.dataframe[1].value.set_index("Agent")
    assert every.loc["market", "Imputed share"] == 0.0  # it states every market
    assert every.loc["gpt-4o", "Return % 95% CI"] == "[0.26, 10.96]" and every.loc["market", "Baseline"]
    assert round(every.loc["gpt-4o", "Value"], 2) == 10525.42


def test_leaderboard_chart_tab_draws_the_chosen_metric_for_every_scored_agent(page: Runner) -> None:
    app = page("leaderboard", cohort=REPLAY, leaderboard_view="Chart", leaderboard_chart="brier")
    _clean(app)
    (chart,) = app.get("plotly_chart")
    figure = json.loads(chart.proto.spec)
    assert figure["layout"]["title"]["text"] == "Brier by agent, with 95% intervals"
    drawn = " ".join(str(name) for trace in figure["data"] for name in trace.get("y", []))
    assert all(agent in drawn for agent in ("gpt-4o", "claude", "random (baseline)"))
    assert "market" not in drawn  # it never bet: no Brier of bets to draw


def test_leaderboard_ranked_by_another_metric_shows_it_in_place_of_the_take(page: Runner) -> None:
    app = page("leaderboard", cohort=REPLAY, leaderboard_by="stated_brier")
    _clean(app)
    columns = list(app.dataframe[0].value.columns)
    assert columns[-1] == "Brier (stated)" and "Tournament take" not in columns
    assert app.dataframe[0].value.set_index("Agent").loc["market", "Brier (stated)"].count("[") == 1


def test_leaderboard_can_rank_by_brier(page: Runner) -> None:
    app = page("leaderboard", cohort=REPLAY, leaderboard_by="brier")
    _clean(app)
    assert app.dataframe[0].value["Agent"].tolist()[:3] == [
        "claude",
        "random",
        "gpt-4o",
    ]  # lowest Brier first


def test_leaderboard_ranks_stated_scores_by_the_imputed_reading(page: Runner) -> None:
    app = page("leaderboard", cohort=REPLAY, leaderboard_by="stated_brier_imputed")
    _clean(app)
    table = app.dataframe[0].value
    ranked = table[table["#"].notna()]  # the failed agent (broken-bot) is listed last, unranked
    imputed = ranked["Brier (stated, imputed)"].tolist()
    # Lowest first; random never stated a probability: no stated score, so not ranked on it.
    assert len(imputed) == 3 and imputed == sorted(imputed)
    assert (
        table.set_index("Agent").loc["random", "Brier (stated, imputed)"]
        != table.set_index("Agent").loc["random", "Brier (stated, imputed)"]
    )  # NaN: no score


def test_live_cohort_without_resolved_bets_explains_the_empty_scores(page: Runner) -> None:
    app = page("leaderboard", cohort=LIVE)
    _clean(app)
    assert any("No bet has resolved yet" in i.value for i in app.info)
    assert any("Live: 1 cohort(s) running" in s.value for s in app.sidebar.success)


def test_all_cohorts_pool_an_agent_across_its_seats(page: Runner) -> None:
    app = page("leaderboard", cohort="__all__", leaderboard_every=True)
    _clean(app)
    table = app.dataframe[1].value.set_index("Agent")  # every metric
    assert len(table) == 6 and round(table.loc["gpt-4o", "Value"], 2) == 20532.70  # two seats, summed
    # Pooled cohorts drew different markets: the key figures add the Briers adjusted for difficulty.
    key_figures = app.dataframe[0].value
    assert {"Brier (bets, adjusted)", "Brier (stated, adjusted)"} <= set(key_figures.columns)
    assert key_figures.set_index("Agent").loc["gpt-4o", "Brier (bets, adjusted)"] != "—"


def test_cohort_page_shows_curves_pnl_rounds_and_errors(page: Runner) -> None:
    app = page("cohort", cohort=REPLAY)
    _clean(app)

    assert app.title[0].value == "Cohort · Replay demo"
    assert [m.value for m in app.metric] == ["Completed", "4 / 4", "5", "$10,000.00"]
    assert len(app.get("plotly_chart")) == 3  # equity curves, P/L bars, decisions per round
    rounds, failures = app.dataframe[0].value, app.dataframe[1].value
    assert rounds["Round"].tolist() == [0, 1, 2, 3] and rounds["Errors"].tolist() == [1, 1, 1, 1]
    assert failures["Agent"].tolist() == ["broken-bot", "broken-bot", "broken-bot", "claude", "broken-bot"]
    assert "[REDACTED]" in failures["Message"].iloc[0]


def test_cohort_page_asks_for_one_cohort_when_all_are_pooled(page: Runner) -> None:
    app = page("cohort", cohort="__all__")
    _clean(app)
    assert [i.value for i in app.info] == ["This page shows one cohort at a time: pick one in the sidebar."]


def test_agent_page_shows_positions_decisions_and_forecasts(page: Runner) -> None:
    app = page("agent", cohort=REPLAY, agent="gpt-4o", agent_raw=True)
    text = _clean(app)

    assert app.title[0].value == "Agent"
    assert app.metric[0].value == "$10,525.42"
    open_positions, closed = app.dataframe[0].value, app.dataframe[1].value
    assert open_positions["Market"].tolist() == ["Will the incumbent win the election?"]
    assert "Outcome" not in open_positions.columns and open_positions["Side"].tolist() == ["YES"]
    assert open_positions["Venue"].tolist() == ["https://example.org/election"]
    assert sorted(zip(closed["Side"], closed["Status"], closed["Outcome"], strict=True)) == [
        ("NO", "settled", "NO"),
        ("YES", "settled", "YES"),
    ]
    # Settled positions show what they held and had cost at settlement, not the row's zeros:
    # Fed NO, $300 for 500 shares paying $1; BTC YES, $500 bet, half sold, the rest settled.
    at_close = closed.set_index("Side")[["Shares", "Cost basis", "Closed for"]].round(2)
    assert at_close.loc["NO"].tolist() == [500.0, 300.0, 500.0]
    assert at_close.loc["YES"].tolist() == [454.55, 250.0, 454.55]
    # Every action and stated forecast names its market by question, with the venue link.
    # Per round, newest first: tool calls, actions, stated forecasts (tables by their columns).
    tables = [d.value for d in app.dataframe[2:]]
    actions = [t for t in tables if "Action" in t.columns]
    sell = actions[0]  # round 3 has no actions; round 2 is the sell
    assert sell[["Action", "Market", "Side", "Sell %"]].values.tolist() == [
        ["sell", "Will Bitcoin close above $100k on Jan 31?", "YES", 50.0]
    ]
    first_bets = actions[-1]  # round 0
    assert first_bets["Market"].tolist() == [
        "Will Bitcoin close above $100k on Jan 31?", "Will the Fed cut rates in March 2025?",
    ]  # fmt: skip
    assert first_bets["Venue"].tolist() == ["https://example.org/btc-100k", "https://example.org/fed-cut"]
    stated = [t for t in tables if "Stated probability" in t.columns][-1]
    fed = stated.set_index("Id").loc["polymarket:fed-cut"]
    assert (fed["Market"], fed["Stated probability"]) == ("Will the Fed cut rates in March 2025?", "YES 0.2")
    assert [e.label.split(" · ")[0] for e in app.expander] == ["Round 3", "Round 2", "Round 1", "Round 0"]
    assert "BTC momentum is strong" in text and "Taking half the BTC profit." in text
    assert len(app.get("plotly_chart")) == 3  # equity curve, stated vs implied, cost and latency
    assert "[REDACTED]" in text  # the planted key in its reasoning and prompt is masked
    calls = [t.value for t in app.dataframe if "Tool" in t.value.columns]
    assert len(calls) == 4 and all(c["Tool"].tolist() == ["market_details"] for c in calls)
    newest, oldest = calls[0], calls[-1]  # expanders run newest first
    assert newest["Result"].tolist() == ['{"question": "**not bold** <b>raw</b> [link](javascript:x)"}']
    assert oldest["Result"].tolist() == [f"(20000 characters, sha256 {'b' * 64})"]


def test_agent_with_only_errors_gets_empty_states_not_tracebacks(page: Runner) -> None:
    app = page("agent", cohort=REPLAY, agent="broken-bot", agent_raw=True)
    text = _clean(app)

    assert [i.value for i in app.info] == ["No positions: this agent has not placed a valid bet yet."]
    # Error text goes to Markdown escaped (backslashes, word joiners that defuse bare links).
    shown = [e.value.replace("\\", "").replace(WORD_JOINER, "") for e in app.error]
    assert [e.split(":")[0] for e in shown] == ["invalid_json"] * 4
    assert "nothing to compare yet" in text
    assert app.metric[3].value == "0%"


def test_markets_page_filters_and_draws_trades_on_the_price(page: Runner) -> None:
    app = page("markets", cohort=REPLAY, markets_search="bitcoin")
    _clean(app)

    assert app.dataframe[0].value["Id"].tolist() == ["polymarket:btc-100k"]
    chart = app.get("plotly_chart")[0].proto.spec
    assert '"Resolved YES"' in chart and '"gpt-4o buys"' in chart and '"gpt-4o sells"' in chart
    assert any("resolved **YES**" in c.value for c in app.caption)


def test_markets_page_filter_with_no_match_says_so(page: Runner) -> None:
    app = page("markets", cohort=REPLAY, markets_search="no such market")
    _clean(app)
    assert [i.value for i in app.info] == ["No market matches these filters."]


def test_calibration_page_draws_reliability_diagrams_per_agent(page: Runner) -> None:
    app = page("calibration", cohort=REPLAY)
    _clean(app)

    spec = app.get("plotly_chart")[0].proto.spec
    for agent in ("claude", "gpt-4o", "market", "random"):
        assert f'"text":"{agent}"' in spec.replace(" ", "")
    summary = app.dataframe[0].value
    assert sorted(set(summary["Forecasts"])) == [  # in words, as the legend names them
        "Implied by bet size (fa)", "Implied by bet size (kelly)", "Stated probability",
    ]  # fmt: skip
    # "All" draws each source in its own colour, each named once in the legend.
    traces = json.loads(spec)["data"]
    legend = {t["name"]: t["line"]["color"] for t in traces if t.get("showlegend") is not False}
    assert len(legend) == 3 and len(set(legend.values())) == 3


def test_calibration_without_resolved_forecasts_explains_why(page: Runner) -> None:
    app = page("calibration", cohort=LIVE)
    _clean(app)
    assert app.info[0].value.startswith("No resolved forecasts yet")


def test_no_live_cohort_means_no_auto_refresh(dashboard: Dashboard, world_url: str, tmp_path: Path) -> None:
    copy = tmp_path / "finished.db"
    shutil.copyfile(world_url.removeprefix("sqlite:///"), copy)
    engine = make_engine(f"sqlite:///{copy}")
    with session_scope(engine) as session:
        session.execute(update(CohortRow).where(CohortRow.id == LIVE).values(status="completed"))
    engine.dispose()
    app = dashboard(f"sqlite:///{copy}")("leaderboard")
    _clean(app)
    assert [s.value for s in app.sidebar.success] == []
    assert app.sidebar.selectbox(key="cohort").value == REPLAY  # the newest cohort, none being live


def test_a_baseline_that_calls_no_model_gets_no_cost_chart(page: Runner) -> None:
    app = page("agent", cohort=REPLAY, agent="random")
    text = _clean(app)
    assert "No model calls (no tokens, no cost)" in text
    assert len(app.get("plotly_chart")) < 3  # no cost and latency chart for a bot that calls no model
    assert [t.label for t in app.tabs] == ["Open (1)", "Closed and settled (2)"]  # open first: it holds one


@pytest.mark.parametrize(
    ("name", "widgets"), [("cohort", {}), ("agent", {"agent": "gpt-4o", "agent_raw": True})]
)
def test_secrets_an_older_config_held_in_headers_and_urls_never_reach_the_screen(
    dashboard: Dashboard, world_url: str, tmp_path: Path, name: str, widgets: dict[str, object]
) -> None:
    copy = tmp_path / "old-config.db"
    shutil.copyfile(world_url.removeprefix("sqlite:///"), copy)
    engine = make_engine(f"sqlite:///{copy}")
    plant_old_config_secrets(engine, REPLAY)
    engine.dispose()
    app = dashboard(f"sqlite:///{copy}")(name, cohort=REPLAY, **widgets)
    text = _clean(app)
    assert [s for s in OLD_CONFIG_SECRETS if s in text] == []
    if name == "cohort":  # the frozen configuration is shown, its harmless parts as written
        assert "X-Title" in text and "api-version=2024" in text and "[REDACTED]" in text
