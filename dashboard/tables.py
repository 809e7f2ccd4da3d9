"""Tables as people read them: chosen columns, plain headers, dollars to the cent, units shown.

Each function turns a frame from ``dashboard.queries`` into ``(frame, column_config)`` for
``st.dataframe``; money is cast to float only here, for display (the data stays exact).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from arena.reports.formatting import bounds
from arena.scoring.registry import METRICS, Metric, headline
from arena.scoring.scores import Reading, suffixed

Config = dict[str, Any]
DOLLARS = st.column_config.NumberColumn(format="dollar")
SHARE = st.column_config.NumberColumn(format="percent")
UTC_TIME = st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm [UTC]")


def _money(*columns: str) -> list[pl.Expr]:
    return [pl.col(c).cast(pl.Float64) for c in columns]


def _ci(value: str, digits: int) -> pl.Expr:
    """An interval column as text, e.g. ``[0.180, 0.250]``."""
    return pl.struct(f"{value}_lo", f"{value}_hi").map_elements(
        lambda r: bounds(r[f"{value}_lo"], r[f"{value}_hi"], digits=digits), return_dtype=pl.String
    )


FORMATS: dict[str, Any] = {
    "money": DOLLARS,
    "pnl": DOLLARS,
    "cost": st.column_config.NumberColumn(format="$%.4f"),
    "share": SHARE,
    "percent": st.column_config.NumberColumn(format="%+.2f%%"),
    "score": st.column_config.NumberColumn(format="%.3f"),
    "number": st.column_config.NumberColumn(format="%.3f"),
    "time": UTC_TIME,
}


def _column(metric: Metric, implied: Reading) -> tuple[list[pl.Expr], Config]:
    """A registered metric as dashboard columns: its value and, when it has one, its interval."""
    title = metric.display_label(implied)
    value = pl.col(metric.key)
    if metric.fmt in ("money", "pnl", "cost"):
        value = value.cast(pl.Float64)
    exprs = [value.alias(title)]
    if metric.interval:
        exprs.append(_ci(metric.key, 2 if metric.fmt == "percent" else 3).alias(f"{title} 95% CI"))
    style = FORMATS.get(metric.fmt) or st.column_config.Column(help=metric.description)
    return exprs, {title: style}


def leaderboard(table: pl.DataFrame, implied: Reading) -> tuple[pl.DataFrame, Config]:
    """The compact table: rank, agent and the registry's headline metrics (chosen Brier first)."""
    return _metric_table(table, headline(implied), implied, words=True)


def every_metric(table: pl.DataFrame, implied: Reading) -> tuple[pl.DataFrame, Config]:
    """Every registered metric with its interval, one row per agent."""
    return _metric_table(table, METRICS, implied, words=False)


def _metric_table(
    table: pl.DataFrame, metrics: tuple[Metric, ...], implied: Reading, *, words: bool
) -> tuple[pl.DataFrame, Config]:
    exprs = [pl.col("rank").alias("#"), pl.col("agent").alias("Agent"), pl.col("baseline").alias("Baseline")]
    config: Config = {}
    for metric in metrics:
        columns, styles = _column(metric, implied)
        exprs += columns
        config |= styles
    if words:
        brier_label = suffixed("brier_label", implied)
        exprs.append(
            pl.concat_str(
                pl.col("return_label"),
                pl.col(brier_label),
                pl.when(pl.col("leakage_guard") == "off").then(pl.lit("leakage guard: off")),
                separator=" · ",
                ignore_nulls=True,
            ).alias("In words")
        )
    return table.select(exprs), config


def rounds(table: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    view = table.select(
        pl.col("round_index").alias("Round"),
        pl.col("scheduled_at").alias("Time"),
        pl.col("status").alias("Status"),
        pl.col("market_count").alias("Markets"),
        pl.col("done").alias("Valid"),
        pl.col("rejected").alias("Rejected"),
        pl.col("error").alias("Errors"),
        pl.col("claimed").alias("Deciding"),
    )
    return view, {"Time": UTC_TIME}


def errors(decisions: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    view = decisions.filter(pl.col("status").is_in(["error", "rejected"])).select(
        pl.col("round_index").alias("Round"),
        pl.col("agent").alias("Agent"),
        pl.col("status").alias("Status"),
        pl.col("error_kind").alias("Kind"),
        pl.col("error").alias("Message"),
    )
    return view, {"Message": st.column_config.TextColumn(width="large")}


def positions(table: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    value = pl.col("shares").cast(pl.Float64) * pl.col("last_price").cast(pl.Float64)
    view = table.select(
        pl.col("question").alias("Market"),
        pl.col("outcome").alias("Side"),
        pl.col("status").alias("Status"),
        pl.col("shares").cast(pl.Float64).alias("Shares"),
        pl.col("cost_basis").cast(pl.Float64).alias("Cost basis"),
        pl.col("last_price").cast(pl.Float64).alias("Mark"),
        pl.when(pl.col("status") == "open").then(value).alias("Value"),
        pl.col("realized_pnl").cast(pl.Float64).alias("Realised P/L"),
        pl.col("stale").alias("Stale mark"),
        pl.col("resolution").fill_null("open").alias("Outcome"),
        pl.col("opened_at").alias("Opened"),
        pl.col("closed_at").alias("Closed"),
    )
    config: Config = {
        "Shares": st.column_config.NumberColumn(format="%.2f"),
        "Cost basis": DOLLARS,
        "Mark": st.column_config.NumberColumn(format="%.3f", help="Last price of the side held"),
        "Value": DOLLARS,
        "Realised P/L": DOLLARS,
        "Opened": UTC_TIME,
        "Closed": UTC_TIME,
    }
    return view, config


def markets(table: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    view = table.select(
        pl.col("question").alias("Question"),
        pl.col("venue").alias("Venue"),
        pl.col("category").fill_null("—").alias("Category"),
        pl.col("last_price").alias("YES price"),
        pl.col("resolution").fill_null("open").alias("Resolution"),
        pl.col("resolved_at").alias("Resolved"),
        pl.col("trades").alias("Trades"),
        pl.col("volume").cast(pl.Float64).alias("Volume"),
        pl.col("market_id").alias("Id"),
    )
    config: Config = {
        "YES price": st.column_config.NumberColumn(format="%.3f"),
        "Resolved": UTC_TIME,
        "Volume": DOLLARS,
    }
    return view, config
