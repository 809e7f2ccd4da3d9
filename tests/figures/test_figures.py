"""The plotly builders, unit-tested on small frames: no Streamlit, no database."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from arena import figures
from arena.figures import BASELINE_COLOURS, PALETTE, agent_styles
from arena.figures.activity import ROUND_LINES

T0 = datetime(2025, 1, 6, tzinfo=UTC)
ROSTER = pl.DataFrame({"agent": ["zeta", "hold", "alpha", "random"], "baseline": [False, True, False, True]})


def test_styles_are_stable_by_name_and_keep_baselines_in_their_own_dashed_colours() -> None:
    styles = agent_styles(ROSTER)
    assert agent_styles(ROSTER.reverse()) == styles
    assert (styles["alpha"].colour, styles["zeta"].colour) == (PALETTE[0], PALETTE[1])
    assert {styles["hold"].colour, styles["random"].colour} <= set(BASELINE_COLOURS)
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


def _rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def _chroma(colour: str) -> int:
    """How far a colour is from grey (0 for any grey)."""
    return max(_rgb(colour)) - min(_rgb(colour))


def _distance(a: str, b: str) -> float:
    return float(sum((x - y) ** 2 for x, y in zip(_rgb(a), _rgb(b), strict=True)) ** 0.5)


def test_six_baselines_and_two_llms_are_told_apart_on_the_equity_chart() -> None:
    """The demo's case: six reference bots beside LLMs. Every curve has its own colour and
    dash, no baseline shares a colour with an LLM, LLMs are solid and bolder, and the round
    lines stay faint behind them."""
    bots = ["contrarian", "favorite", "half", "hold", "kelly", "market"]
    roster = pl.DataFrame({"agent": [*bots, "gpt", "llama"], "baseline": [True] * 6 + [False] * 2})
    marks = pl.DataFrame(
        {
            "agent": [a for a in roster["agent"] for _ in range(2)],
            "marked_at": [T0, T0 + timedelta(days=1)] * len(roster),
            "total_value": [Decimal(10_000)] * (2 * len(roster)),
        }
    )
    fig = figures.equity_curves(marks, agent_styles(roster), decision_times=[T0, T0 + timedelta(days=1)])
    curves = {t.name: t.line for t in fig.data if t.name != "decision rounds"}
    assert sorted(curves) == sorted(roster["agent"])
    baseline_colours = [curves[b].color for b in bots]
    assert all(_chroma(c) >= 0x40 for c in baseline_colours)  # colours, not near-identical greys
    assert min(_distance(a, b) for a in baseline_colours for b in baseline_colours if a != b) >= 80
    assert len(set(baseline_colours)) == 6
    assert len({curves[b].dash for b in bots}) == 5 and all(curves[b].dash != "solid" for b in bots)
    assert not set(baseline_colours) & {curves["gpt"].color, curves["llama"].color}
    assert curves["gpt"].color != curves["llama"].color
    assert curves["gpt"].dash == "solid" and curves["gpt"].width > curves["hold"].width
    rounds = next(t for t in fig.data if t.name == "decision rounds")
    assert rounds.line.color == ROUND_LINES and rounds.line.width < 1 and rounds.hoverinfo == "skip"
    alpha = float(ROUND_LINES.rsplit(",", 1)[1].rstrip(")"))
    assert alpha <= 0.4  # a hint behind the curves


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


def test_reliability_diagrams_fit_a_panel_of_dozens() -> None:
    agents = [f"forecaster-{i:02d}" for i in range(44)]  # an imported human panel: 15 rows of 3
    rows = [
        {"agent": a, "source": "stated", "bin": 3, "mean_forecast": 0.35, "observed": 0.5, "count": 2}
        for a in agents
    ]
    roster = pl.DataFrame({"agent": agents, "baseline": [False] * len(agents)})
    fig = figures.reliability_diagrams(pl.DataFrame(rows), agent_styles(roster))
    assert len(fig.layout.annotations) == 44


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
        own = ("arena.figures", "arena.core.controls")  # the latter: a pure table of characters
        outside = {m.split(".")[0] for m in modules if not m.startswith(own)}
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
