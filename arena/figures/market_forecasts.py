"""One market through the agents' eyes: the YES price, every agent's stated P(YES) and its bets."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import plotly.graph_objects as go
import polars as pl

from arena.figures.markets import market_history
from arena.figures.style import AgentStyle, as_floats, plain, style_of

LARGEST_MARKER = 26.0  # pixels across the biggest stake's marker
SIDES = {"YES": "triangle-up", "NO": "triangle-down"}
STATED_HOVER = "stated P(YES) %{y:.0%}<br>%{x|%Y-%m-%d %H:%M}<extra></extra>"
BET_HOVER = "%{customdata[0]} · $%{customdata[1]:,.2f} at %{customdata[2]:.3f}<extra></extra>"


def market_forecasts(
    prices: pl.DataFrame,
    forecasts: pl.DataFrame,
    bets: pl.DataFrame,
    styles: Mapping[str, AgentStyle],
    *,
    title: str,
    resolution: tuple[str, datetime] | None = None,
) -> go.Figure:
    """``market_history``'s price line and resolution, plus per agent its stated P(YES) as a step
    line (a forecast stands until the next one, the last until the resolution or the latest price)
    and its bets as markers whose *area* grows with the stake (▲ YES, ▼ NO, other outcomes ●),
    drawn at the YES-equivalent fill price.

    ``forecasts``: ``agent``, ``stated_at``, ``p`` (P(YES)); ``bets``: buy fills with ``agent``,
    ``filled_at``, ``outcome``, ``amount``, ``price``."""
    fig = market_history(prices, bets.clear(), styles, title=title, resolution=resolution)
    end = resolution[1] if resolution is not None else prices["observed_at"].max() if len(prices) else None
    for agent in sorted(forecasts["agent"].unique().to_list()):
        style, stated = style_of(styles, agent), forecasts.filter(pl.col("agent") == agent).sort("stated_at")
        times, ps = stated["stated_at"].to_list(), stated["p"].to_list()
        if isinstance(end, datetime) and end > times[-1]:  # the last forecast stands to the end
            times, ps = [*times, end], [*ps, ps[-1]]
        fig.add_trace(
            go.Scatter(
                x=times,
                y=ps,
                mode="lines+markers",
                line={"color": style.colour, "dash": style.dash, "shape": "hv", "width": 1.6},
                marker={"size": 5, "color": style.colour},
                name=f"{plain(agent)} stated",
                legendgroup=agent,
                hovertemplate=f"<b>{plain(agent)}</b> {STATED_HOVER}",
            )
        )
    stakes = as_floats(bets, "amount", "price")
    largest = float(stakes["amount"].max() or 1.0) if len(stakes) else 1.0  # type: ignore[arg-type]
    yes = pl.when(pl.col("outcome") == "NO").then(1.0 - pl.col("price")).otherwise(pl.col("price"))
    for agent in sorted(stakes["agent"].unique().to_list()):
        placed = stakes.filter(pl.col("agent") == agent).with_columns(y=yes).sort("filled_at")
        style = style_of(styles, agent)
        details = zip(
            [plain(str(o)) for o in placed["outcome"].to_list()],
            placed["amount"].to_list(),
            placed["price"].to_list(),
            strict=True,
        )
        fig.add_trace(
            go.Scatter(
                x=placed["filled_at"].to_list(),
                y=placed["y"].to_list(),
                mode="markers",
                name=f"{plain(agent)} bets",
                legendgroup=agent,
                customdata=list(details),
                marker={
                    "symbol": [SIDES.get(str(o), "circle") for o in placed["outcome"].to_list()],
                    "size": placed["amount"].to_list(),
                    "sizemode": "area",
                    "sizeref": 2.0 * largest / LARGEST_MARKER**2,
                    "sizemin": 5,
                    "color": style.colour,
                    "line": {"width": 1, "color": "white"},
                },
                hovertemplate=f"<b>{plain(agent)}</b> bet {BET_HOVER}",
            )
        )
    return fig
