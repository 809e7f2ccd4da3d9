"""The plotly builders, unit-tested on small frames: no Streamlit, no database."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from arena import figures
from arena.figures import GREYS, PALETTE, agent_styles

T0 = datetime(2025, 1, 6, tzinfo=UTC)
ROSTER = pl.DataFrame({"agent": ["zeta", "hold", "alpha", "random"], "baseline": [False, True, False, True]})


def test_styles_are_stable_by_name_and_keep_baselines_grey_and_dashed() -> None:
    styles = agent_styles(ROSTER)
    assert agent_styles(ROSTER.reverse()) == styles
    assert (styles["alpha"].colour, styles["zeta"].colour) == (PALETTE[0], PALETTE[1])
    assert {styles["hold"].colour, styles["random"].colour} <= set(GREYS)
    assert (
        styles["hold"].dash != "solid"
        and styles["random"].dash != "solid"
        and styles["alpha"].dash == "solid"
    )


def test_leaderboard_intervals_draw_asymmetric_error_bars_and_skip_missing_scores() -> None:
    table = pl.DataFrame(
        {
            "agent": ["alpha", "hold", "zeta"],
            "brier": [0.18, None, 0.30],
            "brier_lo": [0.10, None, 0.2],
            "brier_hi": [0.21, None, 0.45],
        }
    )
    fig = figures.leaderboard_intervals(table, "brier", agent_styles(ROSTER), axis="Brier", reference=0.25)
    assert [t.y[0] for t in fig.data] == ["alpha", "zeta"]  # sorted, the agent without a score left out
    alpha = fig.data[0]
    assert alpha.x == (0.18,)
    assert tuple(round(v, 6) for v in (alpha.error_x.array[0], alpha.error_x.arrayminus[0])) == (0.03, 0.08)
    assert fig.layout.shapes[0].x0 == 0.25  # the "always 50%" reference


def _marks() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "agent": ["alpha", "alpha", "hold", "hold"],
            "marked_at": [T0, T0 + timedelta(days=1)] * 2,
            "total_value": [Decimal("10000"), Decimal("10250.50"), Decimal("10000"), Decimal("10000")],
        }
    )


def test_equity_curves_in_dollars_percent_and_with_decision_rounds() -> None:
    styles = agent_styles(ROSTER)
    dollars = figures.equity_curves(
        _marks(), styles, bankroll=10_000.0, decision_times=[T0, T0 + timedelta(days=1)]
    )
    by_name = {t.name: t for t in dollars.data}
    assert by_name["alpha"].y == (10000.0, 10250.5)
    assert by_name["hold"].line.dash == styles["hold"].dash
    rounds = by_name["decision rounds"]
    assert list(rounds.x) == [T0, T0, None, T0 + timedelta(days=1), T0 + timedelta(days=1), None]
    percent = figures.equity_curves(_marks(), styles, bankroll=10_000.0, percent=True)
    assert [round(y, 9) for y in {t.name: t.y for t in percent.data}["alpha"]] == [0.0, 2.505]
    assert percent.layout.yaxis.title.text == "Return (%)"


def test_equity_curves_in_dollars_need_no_bankroll_and_percent_never_guesses_one() -> None:
    styles = agent_styles(ROSTER)
    dollars = figures.equity_curves(_marks(), styles)
    assert {t.name: t.y for t in dollars.data}["alpha"] == (10000.0, 10250.5)
    with pytest.raises(ValueError, match="percent view needs the bankroll"):
        figures.equity_curves(_marks(), styles, percent=True)


def test_pnl_bars_stack_realised_and_unrealised_best_total_first() -> None:
    money = pl.DataFrame(
        {
            "agent": ["alpha", "zeta"],
            "realized_pnl": [Decimal("-100"), Decimal("50.25")],
            "unrealized_pnl": [Decimal("20"), Decimal("0")],
        }
    )
    fig = figures.pnl_bars(money, agent_styles(ROSTER))
    realised, unrealised = fig.data
    assert realised.x == ("zeta", "alpha") and realised.y == (50.25, -100.0) and unrealised.y == (0.0, 20.0)
    assert fig.layout.barmode == "relative"


def test_market_history_puts_no_trades_on_the_yes_scale_and_marks_the_resolution() -> None:
    prices = pl.DataFrame({"observed_at": [T0, T0 + timedelta(days=1)], "price": [0.4, 0.45]})
    fills = pl.DataFrame(
        {
            "agent": ["alpha", "zeta", "zeta"],
            "kind": ["buy", "buy", "settle"],
            "outcome": ["YES", "NO", "NO"],
            "amount": [Decimal("500"), Decimal("300"), Decimal("0")],
            "price": [0.4, 0.6, None],  # a voided settlement has no price: not drawn
            "filled_at": [T0, T0, T0 + timedelta(days=2)],
        }
    )
    fig = figures.market_history(
        prices, fills, agent_styles(ROSTER), title="Q?", resolution=("VOID", T0 + timedelta(days=2))
    )
    markers = {t.name: t for t in fig.data[1:]}
    assert set(markers) == {"alpha buys", "zeta buys"}
    assert markers["zeta buys"].y == (0.4,)  # NO at 0.60 is YES at 0.40
    assert markers["alpha buys"].marker.symbol == "triangle-up"
    assert fig.layout.annotations[0].text == "Voided"


def test_reliability_diagrams_have_one_panel_per_agent_and_both_sources() -> None:
    rows = [
        {"agent": a, "source": s, "bin": b, "mean_forecast": b / 10 + 0.05, "observed": 0.5, "count": 4}
        for a in ("alpha", "zeta")
        for s in ("implied", "stated")
        for b in (2, 7)
    ]
    fig = figures.reliability_diagrams(pl.DataFrame(rows), agent_styles(ROSTER))
    assert [a.text for a in fig.layout.annotations] == ["alpha", "zeta"]
    named = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in named] == ["implied by bet size (fa)", "stated probability"]
    data = [t for t in fig.data if t.name == "stated probability" and t.x != (None,)]
    assert len(data) == 2 and data[0].x == (0.25, 0.75)


def test_round_outcomes_only_show_statuses_that_happened() -> None:
    rounds = pl.DataFrame(
        {"round_index": [0, 1], "done": [3, 2], "rejected": [0, 1], "error": [0, 0], "claimed": [0, 0]}
    )
    fig = figures.round_outcomes(rounds)
    assert [t.name for t in fig.data] == ["done", "rejected"]


def test_empty_frames_give_titled_figures() -> None:
    styles = agent_styles(ROSTER)
    empty_marks = _marks().clear()
    assert (
        figures.equity_curves(empty_marks, styles, bankroll=1.0).layout.title.text
        == "Portfolio value over time"
    )
    empty_bins = pl.DataFrame(schema={"agent": pl.String, "source": pl.String})
    assert all(t.x == (None,) for t in figures.reliability_diagrams(empty_bins, styles).data)  # legend only


def test_figures_package_stays_pure() -> None:
    """Reports and dashboard both read charts from here, so it must import neither (nor storage)."""
    for path in Path(figures.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        outside = {m.split(".")[0] for m in modules if not m.startswith("arena.figures")}
        allowed = {"__future__", "collections", "dataclasses", "datetime", "math", "plotly", "polars"}
        assert outside <= allowed, f"{path.name} imports {sorted(outside - allowed)}"


def test_text_from_agents_and_markets_is_drawn_as_text_not_plotly_markup() -> None:
    """plotly draws names, titles and hover text as a small HTML dialect: data text is escaped."""
    evil = '<a href="http://127.0.0.1:9/x">click</a>\u202e'
    roster = pl.DataFrame({"agent": [evil], "baseline": [False]})
    marks = pl.DataFrame({"agent": [evil], "marked_at": [T0], "total_value": [Decimal("10000")]})
    fig = figures.equity_curves(marks, agent_styles(roster), bankroll=10_000.0, title=f"Equity of {evil}")
    escaped = '&lt;a href="http://127.0.0.1:9/x"&gt;click&lt;/a&gt;\\u202e'
    assert fig.data[0].name == escaped
    assert fig.layout.title.text == f"Equity of {escaped}"
    assert escaped in fig.data[0].hovertemplate and "<a" not in fig.data[0].hovertemplate
