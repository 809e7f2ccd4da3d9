"""Reliability diagrams: forecast against outcome frequency, bin size shown by marker area."""

from __future__ import annotations

from collections.abc import Mapping
from math import ceil, sqrt

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from arena.figures.style import AgentStyle, house_figure, plain, style_of

BIN_HOVER = "forecast %{x:.0%} → happened %{y:.0%}<br>%{customdata} forecasts<extra></extra>"


SOURCES = {
    "implied": ("circle", "solid", "implied by bet size (fa)"),
    "implied_kelly": ("square", "dashdot", "implied by bet size (kelly)"),
    "stated": ("diamond", "dash", "stated probability"),
}
# With several sources in one panel, each its own colour (the panel's title names the agent).
SOURCE_COLOURS = {"implied": "#2563eb", "implied_kelly": "#d97706", "stated": "#059669"}
NEUTRAL = "#374151"


def reliability_diagrams(
    table: pl.DataFrame, styles: Mapping[str, AgentStyle], *, columns: int = 3
) -> go.Figure:
    """One panel per agent: observed frequency against forecast, per bin, for implied and stated
    forecasts (marker area ∝ forecasts in the bin); the diagonal is perfect calibration. One
    source is drawn in the agent's colour; several, each in its own colour, named in the legend."""
    agents = sorted(table["agent"].unique().to_list())
    rows = max(1, ceil(len(agents) / columns))
    # plotly refuses a spacing of 1 / (rows − 1) or more: a roster of dozens (a human panel) needs less.
    spacing = min(0.14, 0.5 / max(1, rows - 1))
    base = make_subplots(
        rows=rows, cols=columns, subplot_titles=[plain(a) for a in agents] or [""], vertical_spacing=spacing
    )
    height = 120 + 300 * rows
    fig = house_figure("Reliability diagrams", "Forecast", "Observed", height=height, base=base, top=90)
    diagonal = {
        "mode": "lines",
        "line": {"color": "#cbd5e1", "dash": "dot"},
        "showlegend": False,
        "hoverinfo": "skip",
    }
    shown = set(table["source"].unique().to_list()) if "source" in table.columns else set()
    several = len(shown) > 1
    for i, agent in enumerate(agents):
        cell = {"row": i // columns + 1, "col": i % columns + 1}
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], **diagonal), **cell)
        for source in SOURCES:
            part = table.filter((pl.col("agent") == agent) & (pl.col("source") == source)).sort("bin")
            if not part.is_empty():
                colour = SOURCE_COLOURS[source] if several else style_of(styles, agent).colour
                fig.add_trace(_bins(part, agent, source, colour), **cell)
    for source, (symbol, dash, label) in SOURCES.items():  # one legend entry per source shown
        if source not in shown:
            continue
        colour = SOURCE_COLOURS[source] if several else NEUTRAL
        line, marker = {"color": colour, "dash": dash}, {"symbol": symbol, "color": colour}
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
        hovertemplate=f"<b>{plain(agent)}</b> ({label})<br>{BIN_HOVER}",
    )
