"""The comparison pages' charts on small frames: paired intervals, a market's forecasts, cost scatters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import polars as pl

from arena.figures import agent_styles
from arena.figures.costs import cost_scatter
from arena.figures.market_forecasts import LARGEST_MARKER, market_forecasts
from arena.figures.pairs import Panel, paired_intervals

T0 = datetime(2025, 1, 6, tzinfo=UTC)
EVIL = "<b onmouseover=x>evil</b>"
ROSTER = pl.DataFrame({"agent": ["alpha", EVIL, "hold"], "baseline": [False, False, True]})
STYLES = agent_styles(ROSTER)


def test_paired_intervals_one_panel_per_metric_with_error_bars_and_escaped_names() -> None:
    table = pl.DataFrame(
        {
            "agent": ["alpha", EVIL],
            "brier": [0.20, None],
            "brier_lo": [0.15, None],
            "brier_hi": [0.30, None],
            "return_pct": [2.0, -1.0],
            "return_pct_lo": [1.0, -3.0],
            "return_pct_hi": [4.0, 0.5],
        }
    )
    panels = [Panel("brier", "Brier (lower is better)", 0.25), Panel("return_pct", "Return %", 0.0)]
    fig = paired_intervals(table, panels, STYLES)
    assert [a.text for a in fig.layout.annotations] == ["Brier (lower is better)", "Return %"]
    # The agent without a Brier yet is left out of that panel only: three markers in all.
    assert [(t.xaxis, t.x[0]) for t in fig.data] == [("x", 0.20), ("x2", 2.0), ("x2", -1.0)]
    alpha = fig.data[0]
    assert (round(alpha.error_x.array[0], 6), round(alpha.error_x.arrayminus[0], 6)) == (0.1, 0.05)
    assert fig.data[2].y == ("&lt;b onmouseover=x&gt;evil&lt;/b&gt;",)
    assert [s.x0 for s in fig.layout.shapes] == [0.25, 0.0]  # each panel's reference
    assert [bool(t.showlegend) for t in fig.data] == [True, False, True]  # one legend entry per agent


def test_market_forecasts_draw_stated_steps_and_bets_sized_by_stake() -> None:
    prices = pl.DataFrame({"observed_at": [T0, T0 + timedelta(days=2)], "price": [0.4, 0.6]})
    forecasts = pl.DataFrame(
        {
            "agent": ["alpha", "alpha", EVIL],
            "stated_at": [T0, T0 + timedelta(days=1), T0],
            "p": [0.5, 0.7, 0.2],
        }
    )
    bets = pl.DataFrame(
        {
            "agent": ["alpha", EVIL, EVIL],
            "filled_at": [T0, T0, T0 + timedelta(days=1)],
            "kind": ["buy"] * 3,
            "outcome": ["YES", "NO", "YES"],
            "amount": [Decimal("400"), Decimal("100"), Decimal("25")],
            "price": [0.4, 0.6, 0.5],
        }
    )
    fig = market_forecasts(
        prices, forecasts, bets, STYLES, title=EVIL, resolution=("YES", T0 + timedelta(days=3))
    )
    assert fig.layout.title.text == "&lt;b onmouseover=x&gt;evil&lt;/b&gt;"
    names = [t.name for t in fig.data]
    assert names[0] == "YES price" and "alpha stated" in names and "alpha bets" in names
    stated = fig.data[names.index("alpha stated")]
    # Each forecast stands until the next; the last one until the resolution.
    assert stated.line.shape == "hv" and stated.y == (0.5, 0.7, 0.7)
    assert stated.x[-1] == T0 + timedelta(days=3)
    evil = fig.data[names.index("&lt;b onmouseover=x&gt;evil&lt;/b&gt; bets")]
    # A NO bet at 0.6 sits at YES-equivalent 0.4; ▼ for NO, ▲ for YES; sizes are stakes, by area.
    assert evil.y == (0.4, 0.5) and tuple(evil.marker.symbol) == ("triangle-down", "triangle-up")
    assert tuple(evil.marker.size) == (100.0, 25.0) and evil.marker.sizemode == "area"
    assert evil.marker.sizeref == 2.0 * 400 / LARGEST_MARKER**2  # the largest stake of any agent
    assert fig.layout.annotations[0].text == "Resolved YES"


def test_market_forecasts_with_prices_only() -> None:
    prices = pl.DataFrame({"observed_at": [T0], "price": [0.4]})
    empty = pl.DataFrame(schema={"agent": pl.String, "stated_at": pl.Datetime("us", "UTC"), "p": pl.Float64})
    bets = pl.DataFrame(
        schema={
            "agent": pl.String,
            "filled_at": pl.Datetime("us", "UTC"),
            "kind": pl.String,
            "outcome": pl.String,
            "amount": pl.Decimal(38, 6),
            "price": pl.Float64,
        }
    )
    fig = market_forecasts(prices, empty, bets, STYLES, title="q")
    assert [t.name for t in fig.data] == ["YES price"]


def test_cost_scatter_plots_cost_against_the_score_with_its_interval() -> None:
    table = pl.DataFrame(
        {
            "agent": ["alpha", EVIL, "broke"],
            "cost": [Decimal("0.50"), Decimal("1.25"), Decimal("0.10")],
            "points": [6.0, -2.0, None],
            "points_lo": [2.0, -5.0, None],
            "points_hi": [10.0, 1.0, None],
        }
    )
    fig = cost_scatter(table, "points", STYLES, axis="Brier points", title="Cost vs Brier skill")
    assert [(t.x[0], t.y[0]) for t in fig.data] == [(0.5, 6.0), (1.25, -2.0)]  # no score yet: left out
    assert (fig.data[0].error_y.array[0], fig.data[0].error_y.arrayminus[0]) == (4.0, 4.0)
    assert fig.data[1].text == ("&lt;b onmouseover=x&gt;evil&lt;/b&gt;",)
    assert fig.layout.shapes[0].y0 == 0.0 and fig.layout.xaxis.title.text == "Model cost ($)"
