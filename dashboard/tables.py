"""Tables as people read them: chosen columns, plain headers, dollars to the cent, units shown.

Each function turns a frame from ``dashboard.queries`` into ``(frame, column_config)`` for
``st.dataframe``; money is cast to float only here, for display (the data stays exact).
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import streamlit as st

from arena.reports.escaping import web_address
from arena.reports.formatting import MISSING, bounds, interval, percent
from arena.scoring.board.notes import FLAGS
from arena.scoring.load.frames import Reading, suffixed
from arena.scoring.metrics.registry import BY_KEY, METRICS
from arena.scoring.metrics.spec import Metric

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


# The compact leaderboard's key figures, in reading order (docs/reading-the-leaderboard.md says why
# these head it); any other metric is in "Every metric". Return and the headline Brier come with
# their intervals, as the CLI prints them.
KEY_FIGURES = ("return_pct", "brier", "stated_brier_imputed", "tournament_take", "valid_rate", "cost")
WITH_INTERVAL = ("return_pct", "brier")
# Widths in pixels: the key figures add up to ~915, what the main column holds beside the sidebar.
WIDTHS = {
    "#": 36,
    "Agent": 110,
    "Status": 170,
    "percent": 148,
    "score": 124,
    "plain": 76,
    "count": 52,
    "share": 84,
    "cost": 82,
}


def leaderboard(table: pl.DataFrame, implied: Reading, by: str) -> tuple[pl.DataFrame, Config]:
    """The compact table, sized to fit a 1400-px window without a sideways scroll: rank, agent,
    status in words (flags first), return and the headline Brier each with its interval as one
    text cell (as the CLI prints them), the stated Brier imputed, the tournament take, valid
    answers and model cost; the metric ranked ``by`` follows when it is not one of those."""
    brier = suffixed("brier", implied)
    keys = [brier if k == "brier" else k for k in KEY_FIGURES]
    # Pooled cohorts: the difficulty-adjusted Briers beside the raw one (null within one cohort).
    keys += [
        k for k in (suffixed("brier_adjusted", implied), "stated_brier_adjusted") if _any_value(table, k)
    ]
    boxed = {brier if k == "brier" else k for k in WITH_INTERVAL}
    extra = [] if by in keys else [BY_KEY[by]]
    exprs = [pl.col("rank").alias("#"), pl.col("agent").alias("Agent"), _status(implied).alias("Status")]
    config: Config = {
        "#": st.column_config.NumberColumn(width=WIDTHS["#"]),
        "Agent": st.column_config.TextColumn(width=WIDTHS["Agent"]),
        "Status": st.column_config.TextColumn(
            width=WIDTHS["Status"],
            help="FAILED (not ranked: too few valid answers), the flags (¶ a bet reading that "
            "contradicts the bets, ¤ stated selectively, ! stated prices it was not shown: see the "
            "notes), baseline, external forecaster (imported forecasts, no bets), and the labels in "
            "words",
        ),
    }
    for metric in (*(BY_KEY[k] for k in keys), *extra):
        title = metric.display_label(implied)
        width = WIDTHS.get(metric.fmt, WIDTHS["cost"])
        if metric.interval and (metric.key in boxed or metric.key not in keys):
            exprs.append(_with_interval(metric.key, metric.fmt).alias(title))
            config[title] = st.column_config.TextColumn(
                width=width, help=f"{metric.description}; 95% interval"
            )
            continue
        columns, styles = _column(metric, implied)
        exprs.append(columns[0])  # the value alone: its interval is under "Every metric"
        width = WIDTHS["plain"] if metric.fmt == "score" else width
        config[title] = {**styles[title], "width": width, "help": metric.description}
    return table.select(exprs), config


def _any_value(table: pl.DataFrame, key: str) -> bool:
    return table[key].null_count() < len(table)


def _status(implied: Reading) -> pl.Expr:
    """What a reader must know before reading the numbers: failed, the flags whose figures cannot
    be read as skill, baseline or external (imported forecasts, no bets), the labels in words (a
    contradicted Brier label says so)."""
    flags = [pl.when(pl.col(f.column)).then(pl.lit(f"{f.mark} {f.words}")) for f in FLAGS]
    flagged = pl.col(suffixed("brier_incoherent", implied)).fill_null(False)
    label = pl.col(suffixed("brier_label", implied))
    return pl.concat_str(
        pl.when(pl.col("failed").cast(pl.Boolean)).then(pl.lit("FAILED: not ranked")),
        *flags,
        pl.when(pl.col("baseline")).then(pl.lit("baseline")),
        pl.when(pl.col("external")).then(pl.lit("external forecaster")),
        pl.col("return_label"),
        pl.when(flagged).then(pl.concat_str(label, pl.lit(" ¶"))).otherwise(label),
        pl.when(pl.col("leakage_guard") == "off").then(pl.lit("leakage guard: off")),
        separator=" · ",
        ignore_nulls=True,
    )


def _with_interval(key: str, fmt: str) -> pl.Expr:
    """A value with its interval as text, e.g. ``+26.3% [1.7, 47.6]`` or ``0.593 [0.563, 0.618]``."""

    def text(row: dict[str, float | None]) -> str:
        value, lo, hi = row[key], row[f"{key}_lo"], row[f"{key}_hi"]
        if fmt != "percent":
            return interval(value, lo, hi, digits=3)
        ends = bounds(lo, hi, digits=1)
        return percent(value, signed=True, digits=1) + ("" if ends == MISSING else f" {ends}")

    return pl.struct(key, f"{key}_lo", f"{key}_hi").map_elements(text, return_dtype=pl.String)


def every_metric(table: pl.DataFrame, implied: Reading) -> tuple[pl.DataFrame, Config]:
    """Every registered metric with its interval, one row per agent."""
    exprs = [pl.col("rank").alias("#"), pl.col("agent").alias("Agent"), pl.col("baseline").alias("Baseline")]
    config: Config = {}
    for metric in METRICS:
        columns, styles = _column(metric, implied)
        exprs += columns
        config |= styles
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


LINK = st.column_config.LinkColumn(
    "Venue", display_text="open ↗", width=70, help="The market's page on its venue (plain http(s) links only)"
)
MARKET = st.column_config.TextColumn(width="large", help="The market's question, as its venue wrote it")


def market_names(markets: pl.DataFrame) -> pl.DataFrame:
    """``market_id`` → ``question`` and ``link``: the venue address when it is a plain http(s)
    one (``web_address``), else null, so a ``javascript:`` URL from venue data is never a link."""
    return markets.select(
        "market_id", "question", link=pl.col("url").map_elements(web_address, return_dtype=pl.String)
    )


def positions(table: pl.DataFrame, names: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    """Positions by question. A closed or settled one shows what it held and had cost when it
    closed (its row ends at zero of both), and what that fetched."""
    value = pl.col("shares").cast(pl.Float64) * pl.col("last_price").cast(pl.Float64)
    is_open = pl.col("status") == "open"
    view = table.join(names.select("market_id", "link"), on="market_id", how="left").select(
        pl.col("question").alias("Market"),
        pl.col("outcome").alias("Side"),
        pl.col("status").alias("Status"),
        pl.when(is_open)
        .then(pl.col("shares"))
        .otherwise(pl.col("closing_shares"))
        .cast(pl.Float64)
        .alias("Shares"),
        pl.when(is_open)
        .then(pl.col("cost_basis"))
        .otherwise(pl.col("closing_cost_basis"))
        .cast(pl.Float64)
        .alias("Cost basis"),
        pl.col("last_price").cast(pl.Float64).alias("Mark"),
        pl.when(is_open).then(value).alias("Value"),
        pl.col("closing_amount").cast(pl.Float64).alias("Closed for"),
        pl.col("realized_pnl").cast(pl.Float64).alias("Realised P/L"),
        pl.col("stale").alias("Stale mark"),
        pl.col("resolution").fill_null("open").alias("Outcome"),
        pl.col("opened_at").alias("Opened"),
        pl.col("closed_at").alias("Closed"),
        pl.col("link").alias("Venue"),
        pl.col("market_id").alias("Id"),
    )
    at_close = " (closed or settled: when it closed)"
    config: Config = {
        "Market": MARKET,
        "Shares": st.column_config.NumberColumn(format="%.2f", help="Shares held" + at_close),
        "Cost basis": st.column_config.NumberColumn(
            format="dollar", help="What the shares held had cost, fees included" + at_close
        ),
        "Mark": st.column_config.NumberColumn(format="%.3f", help="Last price of the side held"),
        "Value": DOLLARS,
        "Closed for": st.column_config.NumberColumn(
            format="dollar",
            help="Cash the closing sale or the settlement paid (a void market refunds the cost)",
        ),
        "Realised P/L": DOLLARS,
        "Opened": UTC_TIME,
        "Closed": UTC_TIME,
        "Venue": LINK,
    }
    return view, config


ACTION_FIELDS = ("type", "market_id", "outcome", "amount", "position_id", "percent")


def actions(
    stored: list[dict[str, object]], names: pl.DataFrame, held: pl.DataFrame
) -> tuple[pl.DataFrame, Config]:
    """A decision's actions (``actions_json``) by question: a sell names a position, whose market
    and side come from the agent's positions ``held``. Ids are the agent's text, kept as written."""
    rows = [{k: None if a.get(k) is None else str(a.get(k)) for k in ACTION_FIELDS} for a in stored]
    frame = pl.DataFrame(rows, schema=dict.fromkeys(ACTION_FIELDS, pl.String))
    sold = held.select("position_id", sold_market="market_id", sold_outcome="outcome").unique("position_id")
    view = (
        frame.join(sold, on="position_id", how="left")
        .with_columns(
            market_id=pl.coalesce("market_id", "sold_market"), outcome=pl.coalesce("outcome", "sold_outcome")
        )
        .join(names, on="market_id", how="left")
        .select(
            pl.col("type").alias("Action"),
            pl.col("question").alias("Market"),
            pl.col("outcome").alias("Side"),
            pl.col("amount").cast(pl.Float64, strict=False).alias("Amount"),
            pl.col("percent").cast(pl.Float64, strict=False).alias("Sell %"),
            pl.col("link").alias("Venue"),
            pl.coalesce("market_id", "position_id").alias("Id"),
        )
    )
    config: Config = {
        "Market": MARKET,
        "Amount": DOLLARS,
        "Sell %": st.column_config.NumberColumn(format="%.0f%%"),
        "Venue": LINK,
    }
    return view, config


def forecasts(stated: dict[str, object], names: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    """A decision's stated probabilities (``probabilities_json``: market id → outcome → p) by question."""
    rows = [{"market_id": str(m), "stated": _probabilities(p)} for m, p in stated.items()]
    frame = pl.DataFrame(rows, schema={"market_id": pl.String, "stated": pl.String})
    view = frame.join(names, on="market_id", how="left").select(
        pl.col("question").alias("Market"),
        pl.col("stated").alias("Stated probability"),
        pl.col("link").alias("Venue"),
        pl.col("market_id").alias("Id"),
    )
    return view, {"Market": MARKET, "Venue": LINK}


def _probabilities(value: object) -> str:
    """``YES 0.75`` (an outcome → probability map), else the stored value as JSON text."""
    if isinstance(value, dict):
        return ", ".join(f"{outcome} {p}" for outcome, p in value.items())
    return json.dumps(value)


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
