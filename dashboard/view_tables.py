"""Tables of the comparison pages, as people read them (see ``dashboard.tables`` for the house rules).

Each function turns frames from ``dashboard.view_queries`` into ``(frame, column_config)`` for
``st.dataframe``. A price per point that cannot be given shows "—" and the reason, as text.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from arena.reports.formatting import bounds
from arena.scoring.load.frames import Reading
from arena.scoring.metrics.registry import BY_KEY
from dashboard.tables import DOLLARS, SHARE, Config

PROBABILITY = st.column_config.NumberColumn(format="%.2f")
THREE = st.column_config.NumberColumn(format="%.3f")


def comparison(pair: pl.DataFrame, first: str, second: str, implied: Reading) -> tuple[pl.DataFrame, Config]:
    """The paired comparison, one row per compared metric, in the registry's words: the share of
    common markets where *first* did strictly better, the ties apart, and why a p-value is missing."""
    ci = pl.struct("diff_lo", "diff_hi").map_elements(
        lambda r: bounds(r["diff_lo"], r["diff_hi"], digits=3), return_dtype=pl.String
    )
    view = pair.select(
        pl.col("metric")
        .replace_strict({k: m.display_label(implied) for k, m in BY_KEY.items()})
        .alias("Metric"),
        pl.col("first").alias(f"First: {first}"),
        pl.col("second").alias(f"Second: {second}"),
        pl.col("diff").alias("First − second"),
        ci.alias("95% CI"),
        pl.col("p_value").alias("p"),
        pl.col("share_better").alias("First better on"),
        pl.col("ties").alias("Ties"),
        pl.col("common_markets").alias("Common markets"),
        pl.when(pl.col("diff").is_null())
        .then(pl.lit("no common market"))
        .otherwise(pl.col("p_value_reason"))
        .alias("Note"),
    )
    # Widths in pixels: the ten columns fit the main column of a 1400-px window.
    config: Config = {
        "Metric": st.column_config.TextColumn(width=140),
        f"First: {first}": {**THREE, "width": 84},
        f"Second: {second}": {**THREE, "width": 84},
        "First − second": {**THREE, "width": 84},
        "95% CI": st.column_config.TextColumn(width=108),
        "p": {**THREE, "width": 44},
        "First better on": {**SHARE, "width": 88},
        "Ties": st.column_config.NumberColumn(width=40),
        "Common markets": st.column_config.NumberColumn(width=96),
        "Note": st.column_config.TextColumn(width=160),
    }
    return view, config


def head_to_head(
    pairs: pl.DataFrame, questions: pl.DataFrame, first: str, second: str
) -> tuple[pl.DataFrame, Config]:
    """The markets both bet on: question, each agent's side, stake, stated P(YES), and who was right."""
    view = pairs.join(questions, on="market_id", how="left").select(
        pl.col("question").fill_null(pl.col("market_id")).alias("Question"),
        *_agent_columns("first", first),
        *_agent_columns("second", second),
        pl.col("resolution").fill_null("open").alias("Resolution"),
        pl.col("who_was_right").alias("Who was right"),
    )
    # Widths in pixels: the eleven columns fit the main column of a 1400-px window.
    config: Config = {"Question": st.column_config.TextColumn(width=200)}
    for name in (first, second):  # narrow columns: the full title shows on hover
        config |= {
            f"{name}: side": st.column_config.TextColumn(width=56, help=f"{name}: side"),
            f"{name}: stake": {**DOLLARS, "width": 72, "help": f"{name}: stake"},
            f"{name}: stated P(YES)": {**PROBABILITY, "width": 72, "help": f"{name}: stated P(YES)"},
            f"{name}: P/L": {**DOLLARS, "width": 72, "help": f"{name}: P/L"},
        }
    return view, config | {
        "Resolution": st.column_config.TextColumn(width=72),
        "Who was right": st.column_config.TextColumn(width=88),
    }


def _agent_columns(which: str, name: str) -> list[pl.Expr]:
    return [
        pl.col(f"sides_{which}").alias(f"{name}: side"),
        pl.col(f"staked_{which}").cast(pl.Float64).alias(f"{name}: stake"),
        pl.col(f"stated_yes_{which}").alias(f"{name}: stated P(YES)"),
        pl.col(f"pnl_{which}").cast(pl.Float64).alias(f"{name}: P/L"),
    ]


def market_positions(stances: pl.DataFrame, positions: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    """Each agent's position on one market: side, stake, stated P(YES), shares held, status, P/L."""
    held = positions.group_by("agent").agg(
        held=pl.col("shares").filter(pl.col("status") == "open").sum().cast(pl.Float64),
        status=pl.col("status").unique().sort().str.join(", "),
    )
    view = (
        stances.join(held, on="agent", how="left")
        .sort("agent")
        .select(
            pl.col("agent").alias("Agent"),
            pl.col("sides").alias("Side"),
            pl.col("staked").cast(pl.Float64).alias("Staked"),
            pl.col("stated_yes").alias("Stated P(YES), last"),
            pl.col("held").fill_null(0.0).alias("Shares held"),
            pl.col("status").alias("Status"),
            pl.col("pnl").cast(pl.Float64).alias("P/L on this market"),
            pl.when(pl.col("right"))
            .then(pl.lit("yes"))
            .when(pl.col("right").not_())
            .then(pl.lit("no"))
            .alias("Right"),
        )
    )
    config: Config = {
        "Staked": DOLLARS,
        "Stated P(YES), last": PROBABILITY,
        "Shares held": st.column_config.NumberColumn(format="%.2f"),
        "P/L on this market": DOLLARS,
    }
    return view, config


def _priced(value: str, why: str) -> pl.Expr:
    """Dollars per unit as text, or "— <reason>" when there is nothing to divide by."""
    dollars = pl.col(value).cast(pl.Float64).map_elements(lambda v: f"${v:,.4f}", return_dtype=pl.String)
    return pl.when(pl.col(value).is_null()).then(pl.concat_str(pl.lit("— "), pl.col(why))).otherwise(dollars)


def value_for_money(table: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    """Cost, skill and return per LLM agent, with dollars per Brier point and per 1% of return."""
    view = table.select(
        pl.col("agent").alias("Agent"),
        pl.col("cost").cast(pl.Float64).alias("Model cost"),
        pl.col("points").alias("Points vs 50%"),
        _priced("per_point", "per_point_why").alias("$ per point vs 50%"),
        pl.col("market_points").alias("Points vs market"),
        _priced("per_market_point", "per_market_point_why").alias("$ per point vs market"),
        pl.col("return_pct").alias("Return %"),
        _priced("per_return_pct", "per_return_pct_why").alias("$ per 1% of return"),
    )
    points = st.column_config.NumberColumn(format="%+.1f")
    config: Config = {
        "Model cost": st.column_config.NumberColumn(format="$%.4f", width="small"),
        "Points vs 50%": points,
        "Points vs market": points,
        "Return %": st.column_config.NumberColumn(format="%+.2f%%", width="small"),
    }
    return view, config
