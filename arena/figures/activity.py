"""Money and activity over a cohort: equity curves, P/L bars, round outcomes, decision costs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from arena.figures.style import AgentStyle, as_floats, house_figure, plain, style_of

ROUND_LINES = "rgba(148, 163, 184, 0.3)"  # slate, mostly transparent
STATUS_COLOURS = {
    "done": "#059669",
    "rejected": "#d97706",
    "error": "#dc2626",
    "missed": "#6b7280",
    "claimed": "#9ca3af",
}


def equity_curves(
    snapshots: pl.DataFrame,
    styles: Mapping[str, AgentStyle],
    *,
    bankroll: float | None = None,
    percent: bool = False,
    decision_times: Sequence[datetime] = (),
    title: str = "Portfolio value over time",
) -> go.Figure:
    """Value (or return % over ``bankroll``) per agent over time, with the decision rounds as dotted
    verticals. Only the percent view needs the bankroll: a caller that does not know it never guesses one."""
    if percent and bankroll is None:
        raise ValueError("equity_curves: the percent view needs the bankroll")
    unit = "Return (%)" if percent else "Portfolio value ($)"
    fig = house_figure(plain(title), "Time (UTC)", unit)
    data = as_floats(snapshots, "total_value")
    if percent:
        data = data.with_columns(total_value=(pl.col("total_value") - bankroll) / bankroll * 100.0)
    hover = "%{y:+.2f}%" if percent else "$%{y:,.2f}"
    for agent in sorted(data["agent"].unique().to_list()):
        style, series = style_of(styles, agent), data.filter(pl.col("agent") == agent).sort("marked_at")
        fig.add_trace(
            go.Scatter(
                x=series["marked_at"].to_list(),
                y=series["total_value"].to_list(),
                mode="lines",
                name=plain(agent),
                line={"color": style.colour, "dash": style.dash, "width": style.width},
                hovertemplate=f"<b>{plain(agent)}</b><br>%{{x|%Y-%m-%d %H:%M}}<br>{hover}<extra></extra>",
            )
        )
    fig.update_yaxes(tickformat="+.1f" if percent else "$,.0f", ticksuffix="%" if percent else "")
    if len(data):
        low, high = float(data["total_value"].min()), float(data["total_value"].max())  # type: ignore[arg-type]
        if decision_times:
            fig.add_trace(_verticals(decision_times, low, high, "decision rounds"))
        if not percent and high - low < 100:  # a flat book gets a readable axis, not $9,999.99 … $10,000.01
            fig.update_yaxes(range=[low - 50, high + 50])
    return fig


def _verticals(times: Sequence[datetime], low: float, high: float, name: str) -> go.Scatter:
    """Faint vertical lines at ``times`` as ONE trace (one legend entry, toggled together): a
    cohort has dozens of rounds, so they stay a hint behind the curves, never a mesh over them."""
    xs: list[datetime | None] = [t for when in times for t in (when, when, None)]
    ys: list[float | None] = [y for _ in times for y in (low, high, None)]
    line = {"color": ROUND_LINES, "width": 0.6}
    return go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip", line=line)


def pnl_bars(money: pl.DataFrame, styles: Mapping[str, AgentStyle]) -> go.Figure:
    """Realised and unrealised P/L per agent, stacked, best total first."""
    fig = house_figure("Profit and loss by agent", "", "P/L ($)")
    data = (
        as_floats(money, "realized_pnl", "unrealized_pnl")
        .with_columns(total=pl.col("realized_pnl") + pl.col("unrealized_pnl"))
        .sort("total", descending=True)
    )
    agents = data["agent"].to_list()
    colours = [style_of(styles, a).colour for a in agents]
    for part, label, pattern in (
        ("realized_pnl", "realised", ""),
        ("unrealized_pnl", "unrealised (open positions)", "/"),
    ):
        fig.add_trace(
            go.Bar(
                x=[plain(a) for a in agents],
                y=data[part].to_list(),
                name=label,
                marker={
                    "color": colours,
                    "pattern": {"shape": pattern, "fillmode": "overlay"},
                    "opacity": 0.9,
                },
                hovertemplate=f"<b>%{{x}}</b><br>{label}: $%{{y:,.2f}}<extra></extra>",
            )
        )
    fig.update_layout(barmode="relative")
    fig.add_hline(y=0, line={"color": "#6b7280", "width": 1})
    fig.update_yaxes(tickformat="$,.0f")
    return fig


def round_outcomes(rounds: pl.DataFrame) -> go.Figure:
    """Per round, how many agents decided validly, were rejected, errored, missed the round (found
    too late, live) or are still deciding."""
    fig = house_figure("Decisions per round", "Round", "Agents", height=320)
    for status, colour in STATUS_COLOURS.items():
        if status in rounds.columns and rounds[status].sum() > 0:
            fig.add_trace(
                go.Bar(
                    x=rounds["round_index"].to_list(),
                    y=rounds[status].to_list(),
                    name=status,
                    marker_color=colour,
                )
            )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(dtick=1 if len(rounds) <= 30 else None)
    fig.update_yaxes(tickformat=",d", dtick=1 if _most_agents(rounds) <= 10 else None)  # whole agents
    return fig


def _most_agents(rounds: pl.DataFrame) -> int:
    counted = [c for c in STATUS_COLOURS if c in rounds.columns]
    return int(rounds.select(pl.sum_horizontal(counted)).max().item() or 0) if counted else 0


def decision_costs(decisions: pl.DataFrame, style: AgentStyle) -> go.Figure:
    """Model cost ($) per round as bars and latency (s) as a line on a second axis."""
    base = make_subplots(specs=[[{"secondary_y": True}]])
    fig = house_figure("Cost and latency per decision", "Round", "", height=340, base=base)
    data = as_floats(decisions, "cost_usd")
    fig.add_trace(
        go.Bar(
            x=data["round_index"].to_list(),
            y=data["cost_usd"].to_list(),
            name="cost",
            marker_color=style.colour,
            hovertemplate="round %{x}: $%{y:,.4f}<extra></extra>",
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=data["round_index"].to_list(),
            y=data["latency_s"].to_list(),
            name="latency",
            mode="lines+markers",
            line={"color": "#374151"},
            hovertemplate="round %{x}: %{y:.2f} s<extra></extra>",
        ),
        secondary_y=True,
    )
    fig.update_yaxes(title_text="Cost ($)", tickformat="$,.4f", secondary_y=False)
    fig.update_yaxes(title_text="Latency (s)", secondary_y=True, showgrid=False, rangemode="tozero")
    return fig
