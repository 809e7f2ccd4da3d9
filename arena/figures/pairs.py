"""Two agents' scores side by side: one row per metric, each agent's value with its interval."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from arena.figures.style import AgentStyle, house_figure, plain, style_of


@dataclass(frozen=True)
class Panel:
    """One metric of the chart: its column in the table, its axis title and a reference line."""

    key: str
    title: str
    reference: float | None = None


def paired_intervals(
    table: pl.DataFrame, panels: Sequence[Panel], styles: Mapping[str, AgentStyle]
) -> go.Figure:
    """Per panel, each agent of ``table`` (two rows of a leaderboard: ``agent``, ``<key>``,
    ``<key>_lo``, ``<key>_hi``) as a marker with its 95% interval; a score still unknown is left
    out of its panel. The caller names the metrics (this package does not read the registry)."""
    agents = table["agent"].to_list()
    base = make_subplots(
        rows=max(1, len(panels)),
        cols=1,
        subplot_titles=[plain(p.title) for p in panels] or [""],
        vertical_spacing=0.5 / max(1, len(panels)),
    )
    height = 100 + 110 * len(panels)
    fig = house_figure("Scores with 95% intervals", "", "", height=height, base=base, top=80)
    legend: set[str] = set()  # each agent's first marker carries its legend entry
    for i, panel in enumerate(panels, start=1):
        for row in table.iter_rows(named=True):
            value = row.get(panel.key)
            if value is None or value != value:
                continue
            fig.add_trace(_marker(row, panel, styles, legend=row["agent"] not in legend), row=i, col=1)
            legend.add(row["agent"])
        if panel.reference is not None:
            fig.add_vline(x=panel.reference, line={"color": "#9ca3af", "dash": "dot"}, row=i, col=1)
    fig.update_yaxes(categoryorder="array", categoryarray=[plain(a) for a in reversed(agents)])
    return fig


def _marker(
    row: dict[str, object], panel: Panel, styles: Mapping[str, AgentStyle], *, legend: bool
) -> go.Scatter:
    agent = str(row["agent"])
    style = style_of(styles, agent)
    value = float(row[panel.key])  # type: ignore[arg-type]
    lo, hi = row.get(f"{panel.key}_lo"), row.get(f"{panel.key}_hi")
    error = None
    if isinstance(lo, float) and isinstance(hi, float) and lo == lo and hi == hi:
        error = {"type": "data", "symmetric": False, "array": [hi - value], "arrayminus": [value - lo]}
    name = plain(agent)
    return go.Scatter(
        x=[value],
        y=[name],
        mode="markers",
        name=name,
        legendgroup=agent,
        showlegend=legend,
        marker={"color": style.colour, "size": 11, "symbol": "diamond" if style.baseline else "circle"},
        error_x=error,
        hovertemplate=f"<b>{name}</b><br>{plain(panel.title)}: %{{x:.3f}}<extra></extra>",
    )
