"""Calibration: reliability diagrams of bet-implied and stated forecasts per agent, with ECE."""

from __future__ import annotations

import polars as pl
import streamlit as st

from arena import figures
from arena.figures.calibration import SOURCES as FIGURE_SOURCES
from dashboard import queries, widgets

# The sources in the words the charts' legend uses (``arena.figures.calibration.SOURCES``).
SOURCES = {"both": "All", **{key: label.capitalize() for key, (_, _, label) in FIGURE_SOURCES.items()}}
EXPLAIN = (
    "Forecasts are grouped in ten bins by what they said (0–10%, 10–20%, …). A calibrated agent's "
    "points sit on the diagonal: of the things it called 70% likely, about 70% happened. Above the "
    "diagonal it was underconfident, below overconfident. Bigger markers hold more forecasts. "
    "**ECE** is the average distance from the diagonal (0 is perfect); **reliability** penalises "
    "miscalibration and **resolution** rewards telling likely from unlikely events apart."
)

ctx = widgets.context()
st.title("Calibration")
widgets.cohort_caption(ctx)
bins, summary = queries.calibration(ctx.url, ctx.ids, ctx.data)
if bins.is_empty():
    widgets.stop_with(
        "No resolved forecasts yet: calibration needs bets or stated probabilities on markets that have "
        "resolved. Let the cohort run further (`arena replay`, or `arena serve` for a live cohort)."
    )
source = st.segmented_control(
    "Forecasts",
    list(SOURCES),
    format_func=SOURCES.__getitem__,
    default="both",
    required=True,
    key="calibration_source",
)
shown = bins if source == "both" else bins.filter(pl.col("source") == source)
if shown.is_empty():
    widgets.stop_with(f"No {SOURCES[str(source)].lower()} on resolved markets yet.")
st.plotly_chart(figures.reliability_diagrams(shown, widgets.styles(ctx)))
st.markdown(EXPLAIN)
table = summary.select(
    pl.col("agent").alias("Agent"),
    pl.col("source").replace_strict(SOURCES).alias("Forecasts"),
    pl.col("brier").alias("Brier"),
    pl.col("ece").alias("ECE"),
    pl.col("reliability").alias("Reliability"),
    pl.col("resolution").alias("Resolution"),
    pl.col("uncertainty").alias("Uncertainty"),
).sort("Agent", "Forecasts")
three = st.column_config.NumberColumn(format="%.3f")
widgets.table(
    table, column_config={c: three for c in ("Brier", "ECE", "Reliability", "Resolution", "Uncertainty")}
)
