"""Tables as people read them: chosen columns, plain headers, dollars to the cent, units shown.

Each function turns a frame from ``dashboard.queries`` into ``(frame, column_config)`` for
``st.dataframe``; money is cast to float only here, for display (the data stays exact).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from arena.reports.formatting import bounds

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


def leaderboard(table: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    view = table.select(
        pl.col("rank").alias("#"),
        pl.col("agent").alias("Agent"),
        pl.col("baseline").alias("Baseline"),
        pl.col("value").cast(pl.Float64).alias("Value"),
        pl.col("pnl").cast(pl.Float64).alias("P/L"),
        pl.col("return_pct").alias("Return"),
        _ci("return_pct", 2).alias("Return 95% CI (%)"),
        pl.col("brier").alias("Brier"),
        _ci("brier", 3).alias("Brier 95% CI"),
        pl.col("bss_market").alias("Skill vs market"),
        pl.col("stated_brier").alias("Stated Brier"),
        pl.col("stated_brier_imputed").alias("Stated Brier (imputed)"),
        _ci("stated_brier_imputed", 3).alias("Imputed 95% CI"),
        pl.col("imputed_share").alias("Imputed share"),
        pl.col("provisional_events").alias("Open stated events"),
        pl.col("log_score").alias("Log score"),
        pl.col("win_rate").alias("Win rate"),
        pl.col("bets").alias("Bets"),
        pl.col("resolved_markets").alias("Resolved markets"),
        pl.col("valid_rate").alias("Valid answers"),
        pl.col("cost").cast(pl.Float64).alias("Model cost"),
        pl.concat_str(
            pl.col("return_label"),
            pl.col("brier_label"),
            pl.when(pl.col("leakage_guard") == "off").then(pl.lit("leakage guard: off")),
            separator=" · ",
            ignore_nulls=True,
        ).alias("In words"),
    )
    config: Config = {
        "Value": DOLLARS,
        "P/L": DOLLARS,
        "Return": st.column_config.NumberColumn(format="%+.2f%%", help="P/L over the bankroll"),
        "Brier": st.column_config.NumberColumn(
            format="%.3f", help="From bet sizes; 0 perfect, 0.25 = always 50%"
        ),
        "Skill vs market": st.column_config.NumberColumn(
            format="%+.3f", help="1 − Brier / the market's Brier"
        ),
        "Stated Brier": st.column_config.NumberColumn(format="%.3f", help="Only what the agent stated"),
        "Stated Brier (imputed)": st.column_config.NumberColumn(
            format="%.3f", help="Every offered round and market; a missing forecast takes the market price"
        ),
        "Imputed share": SHARE,
        "Log score": st.column_config.NumberColumn(format="%.3f"),
        "Win rate": SHARE,
        "Valid answers": SHARE,
        "Model cost": st.column_config.NumberColumn(format="$%.4f"),
    }
    return view, config


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
