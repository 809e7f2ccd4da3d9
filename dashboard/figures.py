"""Every chart of the dashboard and the reports: pure functions, polars frames in, ``go.Figure`` out.

Nothing here reads the database or Streamlit state, so each builder is unit-tested on small
frames and the HTML report draws exactly the charts the dashboard shows. Shared conventions:

- an agent keeps one colour everywhere (``agent_styles``): LLMs and plug-ins get distinct
  colours, baseline bots a grey with a dashed line, so references never look like contenders;
- money axes are in dollars with cents in hover labels; returns and probabilities say their unit;
- every figure has a title and axis titles, and an empty frame gives an empty, titled figure.

All builders live in this one module on purpose (the dashboard and the HTML report share it),
which is why it is a little over the house's ~400-line guide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from math import ceil, sqrt

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

PALETTE = (
    "#2563eb",
    "#dc2626",
    "#059669",
    "#7c3aed",
    "#ea580c",
    "#0891b2",
    "#db2777",
    "#854d0e",
    "#65a30d",
    "#1e3a8a",
)
# Baselines: a family of greys crossed with dash patterns (distinct for up to 40 baselines).
GREYS = ("#6b7280", "#a8a29e", "#374151", "#94a3b8", "#78716c", "#9ca3af", "#57534e", "#64748b")
DASHES = ("dash", "dot", "dashdot", "longdash", "longdashdot")
STATUS_COLOURS = {"done": "#059669", "rejected": "#d97706", "error": "#dc2626", "claimed": "#9ca3af"}
TEMPLATE = "plotly_white"
FONT = {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 13}


@dataclass(frozen=True)
class AgentStyle:
    colour: str
    dash: str  # "solid" for contenders, a dash pattern for baselines
    baseline: bool


def agent_styles(roster: pl.DataFrame) -> dict[str, AgentStyle]:
    """One style per agent name of ``roster`` (columns ``agent``, ``baseline``), stable by name order."""
    names = roster.select("agent", "baseline").unique("agent").sort("agent")
    styles: dict[str, AgentStyle] = {}
    contenders = baselines = 0
    for name, baseline in names.iter_rows():
        if baseline:
            styles[name] = AgentStyle(GREYS[baselines % len(GREYS)], DASHES[baselines % len(DASHES)], True)
            baselines += 1
        else:
            styles[name] = AgentStyle(PALETTE[contenders % len(PALETTE)], "solid", False)
            contenders += 1
    return styles


def _style(styles: Mapping[str, AgentStyle], agent: str) -> AgentStyle:
    return styles.get(agent, AgentStyle(GREYS[0], "solid", False))


def _figure(
    title: str, x_title: str, y_title: str, *, height: int = 420, base: go.Figure | None = None, top: int = 60
) -> go.Figure:
    """The house look: template, font, left-aligned title, horizontal legend under the x axis
    (where it may wrap onto several rows without covering the title or the data)."""
    fig = base if base is not None else go.Figure()
    bottom = 120
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title, "x": 0.0, "xanchor": "left"},
        font=FONT,
        height=height + bottom - 50,
        margin={"l": 60, "r": 60 if base is not None else 20, "t": top, "b": bottom},
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": -70 / (height - top - 50),
            "xanchor": "left",
            "x": 0.0,
        },
        hoverlabel={"namelength": -1},
    )
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def _floats(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """Decimal money as float for plotting (display only; exact values stay in the tables)."""
    return frame.with_columns(pl.col(c).cast(pl.Float64) for c in columns)


METRIC_AXES: dict[str, tuple[str, float | None]] = {
    "return_pct": ("Return (%)", 0.0),
    "brier": ("Brier score from bet sizes (lower is better)", 0.25),
    "bss_market": ("Brier skill vs the market (higher is better)", 0.0),
    "stated_brier": ("Brier score of stated probabilities (lower is better)", 0.25),
    "log_score": ("Log score of stated probabilities (higher is better)", None),
    "rel_log_score": ("Log score relative to the market (higher is better)", 0.0),
}


def leaderboard_intervals(table: pl.DataFrame, metric: str, styles: Mapping[str, AgentStyle]) -> go.Figure:
    """Each agent's ``metric`` with its bootstrap interval as an error bar; baselines in grey."""
    axis, reference = METRIC_AXES[metric]
    rows = table.filter(pl.col(metric).is_not_null() & pl.col(metric).is_not_nan()).sort(metric)
    fig = _figure(
        f"{axis.split(' (')[0]} by agent, with 95% intervals", axis, "", height=max(260, 60 + 38 * len(rows))
    )
    for row in rows.iter_rows(named=True):
        style = _style(styles, row["agent"])
        lo, hi, value = row.get(f"{metric}_lo"), row.get(f"{metric}_hi"), row[metric]
        error = {
            "type": "data",
            "symmetric": False,
            "array": [hi - value],
            "arrayminus": [value - lo],
            "thickness": 2,
        }
        label = row["agent"] + (" (baseline)" if style.baseline else "")
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
    return fig


def equity_curves(
    snapshots: pl.DataFrame,
    styles: Mapping[str, AgentStyle],
    *,
    bankroll: float,
    percent: bool = False,
    decision_times: Sequence[datetime] = (),
    title: str = "Portfolio value over time",
) -> go.Figure:
    """Value (or return %) per agent over time, with the decision rounds as dotted verticals."""
    unit = "Return (%)" if percent else "Portfolio value ($)"
    fig = _figure(title, "Time (UTC)", unit)
    data = _floats(snapshots, "total_value")
    if percent:
        data = data.with_columns(total_value=(pl.col("total_value") - bankroll) / bankroll * 100.0)
    hover = "%{y:+.2f}%" if percent else "$%{y:,.2f}"
    for agent in sorted(data["agent"].unique().to_list()):
        style, series = _style(styles, agent), data.filter(pl.col("agent") == agent).sort("marked_at")
        fig.add_trace(
            go.Scatter(
                x=series["marked_at"].to_list(),
                y=series["total_value"].to_list(),
                mode="lines",
                name=agent,
                line={"color": style.colour, "dash": style.dash, "width": 1.8 if style.baseline else 2.4},
                hovertemplate=f"<b>{agent}</b><br>%{{x|%Y-%m-%d %H:%M}}<br>{hover}<extra></extra>",
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
    """Dotted vertical lines at ``times`` as ONE trace (one legend entry, toggled together)."""
    xs: list[datetime | None] = [t for when in times for t in (when, when, None)]
    ys: list[float | None] = [y for _ in times for y in (low, high, None)]
    line = {"color": "#cbd5e1", "dash": "dot", "width": 1}
    return go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip", line=line)


def pnl_bars(money: pl.DataFrame, styles: Mapping[str, AgentStyle]) -> go.Figure:
    """Realised and unrealised P/L per agent, stacked, best total first."""
    fig = _figure("Profit and loss by agent", "", "P/L ($)")
    data = (
        _floats(money, "realized_pnl", "unrealized_pnl")
        .with_columns(total=pl.col("realized_pnl") + pl.col("unrealized_pnl"))
        .sort("total", descending=True)
    )
    agents = data["agent"].to_list()
    colours = [_style(styles, a).colour for a in agents]
    for part, label, pattern in (
        ("realized_pnl", "realised", ""),
        ("unrealized_pnl", "unrealised (open positions)", "/"),
    ):
        fig.add_trace(
            go.Bar(
                x=agents,
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
    """Per round, how many agents decided validly, were rejected, errored or are still deciding."""
    fig = _figure("Decisions per round", "Round", "Agents", height=320)
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
    return fig


def stated_vs_implied(points: pl.DataFrame, style: AgentStyle) -> go.Figure:
    """Stated P(YES) against the P(YES) implied by the bet size, one point per bet that had both."""
    fig = _figure("Stated vs bet-implied probability of YES", "Implied by bet size", "Stated", height=380)
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
            text=points["question"].to_list(),
            marker={"color": style.colour, "size": 10, "line": {"width": 1, "color": "white"}},
            hovertemplate="%{text}<br>implied %{x:.0%}, stated %{y:.0%}<extra></extra>",
        )
    )
    fig.update_xaxes(range=[0, 1], tickformat=".0%")
    fig.update_yaxes(range=[0, 1], tickformat=".0%")
    return fig


def decision_costs(decisions: pl.DataFrame, style: AgentStyle) -> go.Figure:
    """Model cost ($) per round as bars and latency (s) as a line on a second axis."""
    base = make_subplots(specs=[[{"secondary_y": True}]])
    fig = _figure("Cost and latency per decision", "Round", "", height=340, base=base)
    data = _floats(decisions, "cost_usd")
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


TRADE_HOVER = "%{customdata[0]}<br>$%{customdata[1]:,.2f} at %{customdata[2]:.3f}<extra></extra>"
MARKERS = {
    "buy": ("triangle-up", "buys"),
    "sell": ("triangle-down", "sells"),
    "settle": ("diamond", "settled"),
}


def market_history(
    prices: pl.DataFrame,
    fills: pl.DataFrame,
    styles: Mapping[str, AgentStyle],
    *,
    title: str,
    resolution: tuple[str, datetime] | None = None,
) -> go.Figure:
    """The YES price over time with each agent's entries (▲), exits (▼, ◆) and the resolution.

    A NO trade is drawn at its YES-equivalent price (1 − its price), so every marker sits on the
    line it traded against; a settlement sits at the YES-equivalent payout (1 or 0; 0.5 on 50-50).
    """
    fig = _figure(title, "Time (UTC)", "Price of YES")
    fig.add_trace(
        go.Scatter(
            x=prices["observed_at"].to_list(),
            y=prices["price"].to_list(),
            mode="lines",
            name="YES price",
            line={"color": "#111827", "width": 2},
            hovertemplate="%{x|%Y-%m-%d %H:%M}: %{y:.3f}<extra></extra>",
        )
    )
    for trace in _trades(fills, styles):
        fig.add_trace(trace)
    if resolution is not None:
        kind, when = resolution
        fig.add_vline(x=when, line={"color": "#059669" if kind != "VOID" else "#9ca3af", "dash": "dash"})
        label = "Voided" if kind == "VOID" else f"Resolved {kind}"
        note = {"yref": "paper", "xanchor": "right", "showarrow": False, "bgcolor": "rgba(255,255,255,0.8)"}
        fig.add_annotation(x=when, y=0.97, text=label, **note)
    fig.update_yaxes(range=[0, 1], tickformat=".0%")
    return fig


def _trades(fills: pl.DataFrame, styles: Mapping[str, AgentStyle]) -> list[go.Scatter]:
    """One marker trace per (agent, kind), at YES-equivalent prices (see ``market_history``)."""
    yes = pl.when(pl.col("outcome") == "NO").then(1.0 - pl.col("price")).otherwise(pl.col("price"))
    trades = _floats(fills, "amount", "price").with_columns(y=yes).drop_nulls("y")
    traces = []
    for (agent, kind), group in sorted(trades.group_by("agent", "kind"), key=lambda item: item[0]):
        symbol, verb = MARKERS[str(kind)]
        details = zip(
            group["outcome"].to_list(), group["amount"].to_list(), group["price"].to_list(), strict=True
        )
        marker = {
            "symbol": symbol,
            "size": 13,
            "color": _style(styles, str(agent)).colour,
            "line": {"width": 1, "color": "white"},
        }
        traces.append(
            go.Scatter(
                x=group["filled_at"].to_list(),
                y=group["y"].to_list(),
                mode="markers",
                name=f"{agent} {verb}",
                customdata=list(details),
                marker=marker,
                hovertemplate=f"<b>{agent}</b> {verb} {TRADE_HOVER}",
            )
        )
    return traces


BIN_HOVER = "forecast %{x:.0%} → happened %{y:.0%}<br>%{customdata} forecasts<extra></extra>"


SOURCES = {
    "implied": ("circle", "solid", "implied by bet size"),
    "stated": ("diamond", "dash", "stated probability"),
}


def reliability_diagrams(
    table: pl.DataFrame, styles: Mapping[str, AgentStyle], *, columns: int = 3
) -> go.Figure:
    """One panel per agent: observed frequency against forecast, per bin, for implied and stated
    forecasts (marker area ∝ forecasts in the bin); the diagonal is perfect calibration."""
    agents = sorted(table["agent"].unique().to_list())
    rows = max(1, ceil(len(agents) / columns))
    base = make_subplots(rows=rows, cols=columns, subplot_titles=agents or [""], vertical_spacing=0.14)
    height = 120 + 300 * rows
    fig = _figure("Reliability diagrams", "Forecast", "Observed", height=height, base=base, top=90)
    diagonal = {
        "mode": "lines",
        "line": {"color": "#cbd5e1", "dash": "dot"},
        "showlegend": False,
        "hoverinfo": "skip",
    }
    for i, agent in enumerate(agents):
        cell = {"row": i // columns + 1, "col": i % columns + 1}
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], **diagonal), **cell)
        for source in SOURCES:
            part = table.filter((pl.col("agent") == agent) & (pl.col("source") == source)).sort("bin")
            if not part.is_empty():
                fig.add_trace(_bins(part, agent, source, _style(styles, agent).colour), **cell)
    for source, (symbol, dash, label) in SOURCES.items():  # one neutral legend entry per source
        line, marker = {"color": "#374151", "dash": dash}, {"symbol": symbol, "color": "#374151"}
        legend = {"name": label, "legendgroup": source, "line": line, "marker": marker}
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines+markers", **legend))
    fig.update_xaxes(range=[-0.04, 1.04], tickformat=".0%", title_text="Forecast")
    fig.update_yaxes(range=[-0.04, 1.04], tickformat=".0%", title_text="Observed")
    return fig


def _areas(counts: list[int], smallest: float = 6.0, largest: float = 22.0) -> list[float]:
    """Marker sizes whose area grows with the count, the fullest bin drawn ``largest`` pixels wide."""
    top = max(counts, default=1) or 1
    return [smallest + (largest - smallest) * sqrt(n / top) for n in counts]


def _bins(part: pl.DataFrame, agent: str, source: str, colour: str) -> go.Scatter:
    symbol, dash, label = SOURCES[source]
    return go.Scatter(
        x=part["mean_forecast"].to_list(),
        y=part["observed"].to_list(),
        mode="lines+markers",
        name=label,
        legendgroup=source,
        showlegend=False,
        customdata=part["count"].to_list(),
        line={"color": colour, "dash": dash},
        marker={
            "symbol": symbol,
            "size": _areas(part["count"].to_list()),
            "color": colour,
        },
        hovertemplate=f"<b>{agent}</b> ({label})<br>{BIN_HOVER}",
    )
