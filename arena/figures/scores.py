"""Score charts: each agent's metric with its interval, and stated against bet-implied forecasts."""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go
import polars as pl

from arena.figures.style import LEGEND_BOTTOM, NO_LEGEND_BOTTOM, AgentStyle, house_figure, plain, style_of


def leaderboard_intervals(
    table: pl.DataFrame,
    metric: str,
    styles: Mapping[str, AgentStyle],
    *,
    axis: str,
    reference: float | None = None,
    flags: Mapping[str, str] | None = None,
) -> go.Figure:
    """Each agent's ``metric`` with its bootstrap interval as an error bar; baselines as ◆.

    ``axis`` titles the axis (the caller's label of the metric, e.g. from the scoring registry,
    which this package does not import); ``reference`` draws a dotted line (0.25, 0, ...);
    ``flags`` adds a word to an agent's row name (e.g. a reading that contradicts its bets).
    """
    rows = table.filter(pl.col(metric).is_not_null() & pl.col(metric).is_not_nan()).sort(metric)
    fig = house_figure(
        f"{axis.split(' (')[0]} by agent, with 95% intervals", axis, "", height=max(260, 60 + 38 * len(rows))
    )
    for row in rows.iter_rows(named=True):
        style = style_of(styles, row["agent"])
        lo, hi, value = row.get(f"{metric}_lo"), row.get(f"{metric}_hi"), row[metric]
        error = {
            "type": "data",
            "symmetric": False,
            "array": [hi - value],
            "arrayminus": [value - lo],
            "thickness": 2,
        }
        label = plain(row["agent"]) + (" (baseline)" if style.baseline else "")
        label += f" {plain(flags[row['agent']])}" if flags and row["agent"] in flags else ""
        fig.add_trace(
            go.Scatter(
                x=[value],
                y=[label],
                mode="markers",
                name=label,
                marker={
                    "color": style.colour,
                    "size": 11,
                    "symbol": "diamond" if style.baseline else "circle",
                },
                error_x=error if lo is not None and hi is not None and lo == lo else None,
                hovertemplate=f"<b>{label}</b><br>{axis}: %{{x:.3f}}<extra></extra>",
                showlegend=False,
            )
        )
    if reference is not None:
        fig.add_vline(x=reference, line={"color": "#9ca3af", "dash": "dot"})
    # No legend here (the agents name the rows), so none of the room kept for one under the axis.
    spare = LEGEND_BOTTOM - NO_LEGEND_BOTTOM
    fig.update_layout(margin_b=NO_LEGEND_BOTTOM, height=fig.layout.height - spare)
    return fig


def stated_vs_implied(points: pl.DataFrame, style: AgentStyle) -> go.Figure:
    """Stated P(YES) against the P(YES) implied by the bet size, one point per bet that had both."""
    fig = house_figure(
        "Stated vs bet-implied probability of YES", "Implied by bet size", "Stated", height=380
    )
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="agreement",
            line={"color": "#cbd5e1", "dash": "dot"},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=points["implied"].to_list(),
            y=points["stated"].to_list(),
            mode="markers",
            name="bets",
            text=[plain(q) for q in points["question"].to_list()],
            marker={"color": style.colour, "size": 10, "line": {"width": 1, "color": "white"}},
            hovertemplate="%{text}<br>implied %{x:.0%}, stated %{y:.0%}<extra></extra>",
        )
    )
    fig.update_xaxes(range=[0, 1], tickformat=".0%")
    fig.update_yaxes(range=[0, 1], tickformat=".0%")
    return fig
