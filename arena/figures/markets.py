"""One market's price history with every agent's trades on it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import plotly.graph_objects as go
import polars as pl

from arena.figures.style import AgentStyle, as_floats, house_figure, plain, style_of

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
    fig = house_figure(plain(title), "Time (UTC)", "Price of YES")
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
    trades = as_floats(fills, "amount", "price").with_columns(y=yes).drop_nulls("y")
    traces = []
    for (agent, kind), group in sorted(trades.group_by("agent", "kind"), key=lambda item: item[0]):
        symbol, verb = MARKERS[str(kind)]
        details = zip(
            [plain(str(o)) for o in group["outcome"].to_list()],
            group["amount"].to_list(),
            group["price"].to_list(),
            strict=True,
        )
        marker = {
            "symbol": symbol,
            "size": 13,
            "color": style_of(styles, str(agent)).colour,
            "line": {"width": 1, "color": "white"},
        }
        traces.append(
            go.Scatter(
                x=group["filled_at"].to_list(),
                y=group["y"].to_list(),
                mode="markers",
                name=f"{plain(str(agent))} {verb}",
                customdata=list(details),
                marker=marker,
                hovertemplate=f"<b>{plain(str(agent))}</b> {verb} {TRADE_HOVER}",
            )
        )
    return traces
