"""The house look shared by every chart: one colour and dash per agent, the layout, the fonts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import plotly.graph_objects as go
import polars as pl

from arena.core.controls import BIDI_CONTROLS

# Colour-blind-safe colours (checked for deuteranopia, protanopia and tritanopia by their
# authors). Contenders (LLMs, plug-ins) get Okabe-Ito's vivid hues as solid lines (its yellow is
# left out: unreadable on white); baselines get Paul Tol's "muted" scheme as thinner dashed
# lines, each baseline its own colour *and* dash, so six references never blur into one grey
# and never pass for a contender.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
BASELINE_COLOURS = ("#332288", "#44AA99", "#999933", "#CC6677", "#882255", "#88CCEE", "#117733", "#AA4499")
DASHES = ("dash", "dot", "dashdot", "longdash", "longdashdot")  # 5 and 8 are coprime: 40 distinct pairs
NEUTRAL = "#6b7280"  # anything not in the roster
TEMPLATE = "plotly_white"
LEGEND_BOTTOM, NO_LEGEND_BOTTOM = 120, 60  # room under the x axis, with and without a legend
FONT = {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 13}


@dataclass(frozen=True)
class AgentStyle:
    colour: str
    dash: str  # "solid" for contenders, a dash pattern for baselines
    baseline: bool

    @property
    def width(self) -> float:
        """Line width: contenders drawn bolder than the references they are measured against."""
        return 1.6 if self.baseline else 2.6


_PLOTLY_MARKUP = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", **BIDI_CONTROLS})


def plain(text: str) -> str:
    """Agent, market or model text made inert for plotly, which draws labels, titles and hover
    text as a small HTML dialect (``<a href>``, ``<b>``, entities): markup characters become
    entities, so the text shows exactly as written and no link or tag is ever drawn; bidirectional
    controls are spelt out so a name cannot reverse the text around it."""
    return text.translate(_PLOTLY_MARKUP)


def agent_styles(roster: pl.DataFrame) -> dict[str, AgentStyle]:
    """One style per agent name of ``roster`` (columns ``agent``, ``baseline``), stable by name order."""
    names = roster.select("agent", "baseline").unique("agent").sort("agent")
    styles: dict[str, AgentStyle] = {}
    contenders = baselines = 0
    for name, baseline in names.iter_rows():
        if baseline:
            styles[name] = AgentStyle(
                BASELINE_COLOURS[baselines % len(BASELINE_COLOURS)], DASHES[baselines % len(DASHES)], True
            )
            baselines += 1
        else:
            styles[name] = AgentStyle(PALETTE[contenders % len(PALETTE)], "solid", False)
            contenders += 1
    return styles


def style_of(styles: Mapping[str, AgentStyle], agent: str) -> AgentStyle:
    return styles.get(agent, AgentStyle(NEUTRAL, "solid", False))


def house_figure(
    title: str, x_title: str, y_title: str, *, height: int = 420, base: go.Figure | None = None, top: int = 60
) -> go.Figure:
    """The house look: template, font, left-aligned title, horizontal legend under the x axis
    (where it may wrap onto several rows without covering the title or the data)."""
    fig = base if base is not None else go.Figure()
    bottom = LEGEND_BOTTOM
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


def as_floats(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """Decimal money as float for plotting (display only; exact values stay in the tables)."""
    return frame.with_columns(pl.col(c).cast(pl.Float64) for c in columns)
