"""What the LLM agents' skill cost: model cost against a score, one labelled point per agent."""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go
import polars as pl

from arena.figures.style import AgentStyle, as_floats, house_figure, plain, style_of

HOVER = "%{y:.2f}<extra></extra>"


def cost_scatter(
    table: pl.DataFrame,
    value: str,
    styles: Mapping[str, AgentStyle],
    *,
    axis: str,
    title: str,
    reference: float | None = 0.0,
) -> go.Figure:
    """Model cost in dollars (x) against ``value`` (y) per agent of ``table`` (``agent``, ``cost``,
    ``value`` and, when present, ``<value>_lo``/``<value>_hi`` drawn as its interval). Agents
    without a ``value`` yet are left out; ``reference`` draws the break-even line (0: no skill)."""
    data = as_floats(table, "cost").filter(pl.col(value).is_not_null() & pl.col(value).is_not_nan())
    fig = house_figure(plain(title), "Model cost ($)", plain(axis), height=380)
    for row in data.iter_rows(named=True):
        agent, style = row["agent"], style_of(styles, row["agent"])
        lo, hi = row.get(f"{value}_lo"), row.get(f"{value}_hi")
        error = None
        if lo is not None and hi is not None:
            error = {
                "type": "data",
                "symmetric": False,
                "array": [hi - row[value]],
                "arrayminus": [row[value] - lo],
            }
        fig.add_trace(
            go.Scatter(
                x=[row["cost"]],
                y=[row[value]],
                mode="markers+text",
                text=[plain(agent)],
                textposition="top center",
                name=plain(agent),
                marker={"color": style.colour, "size": 12},
                error_y=error,
                hovertemplate=f"<b>{plain(agent)}</b><br>cost $%{{x:,.4f}}<br>{plain(axis)}: {HOVER}",
            )
        )
    if reference is not None:
        fig.add_hline(y=reference, line={"color": "#9ca3af", "dash": "dot"})
    most = float(data["cost"].max() or 0.0) if len(data) else 0.0  # type: ignore[arg-type]
    # From $0, with room right of the dearest agent for its name.
    fig.update_xaxes(tickformat="$,.4f", range=[0.0, most * 1.25 if most > 0 else 1.0])
    return fig
