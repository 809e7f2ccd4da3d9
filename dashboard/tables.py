"""The leaderboard's tables, and the house rules of every dashboard table.

The rules: chosen columns, plain headers, dollars to the cent, units shown. Each function turns a
frame from ``dashboard.queries`` into ``(frame, column_config)`` for ``st.dataframe``; money is
cast to float only here, for display (the data stays exact). The other pages' tables follow the
same rules: ``dashboard.log_tables`` (cohort, agent and market pages) and ``dashboard.view_tables``
(the comparison pages).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import polars as pl
import streamlit as st

from arena.reports.formatting import MISSING, bounds, interval, percent
from arena.scoring.board.notes import FLAGS
from arena.scoring.load.frames import Reading, suffixed
from arena.scoring.metrics.registry import BY_KEY, METRICS
from arena.scoring.metrics.spec import Metric

Config = dict[str, Any]
DOLLARS = st.column_config.NumberColumn(format="dollar")
SHARE = st.column_config.NumberColumn(format="percent")
UTC_TIME = st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm [UTC]")


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
# their intervals, as the CLI prints them, each followed by its verdict in words.
KEY_FIGURES = ("return_pct", "brier", "stated_brier_imputed", "tournament_take")
WITH_INTERVAL = ("return_pct", "brier")
# The table holds four key figures: the metric ranked by, if not among them, takes the last place.
SHOWN = 4
# Widths in pixels, wide enough for their headers and texts: a row adds up to ~930, what the main
# column holds beside the sidebar in a 1400-px window.
WIDTHS = {
    "#": 30,
    "Agent": 100,
    "Role": 64,
    "words": 84,
    "percent": 150,  # −97.8% [−100.0, −31.2]
    "score": 136,  # 0.589 [0.558, 0.617]
    "plain": 144,  # "Brier (stated, imputed)", "Brier (stated, adjusted)"
    "share": 110,  # "Tournament take"
    "cost": 82,
}
ROLE_HELP = (
    "agent: a contestant · baseline: a simple reference bot an LLM should beat · external: "
    "forecasts imported from outside the arena (no bets) · FAILED: too few valid answers, not ranked. "
    "¤ stated selectively, ! stated prices it was not shown (see the notes)"
)
WORDS_HELP = "The figure to the left in words, from Excellent to Very Poor (Fair: at or near random)"


def leaderboard(table: pl.DataFrame, implied: Reading, by: str) -> tuple[pl.DataFrame, Config]:
    """The compact table, sized to fit a 1400-px window without a sideways scroll: rank, agent,
    its role, return and the headline Brier each with its interval as one text cell (as the CLI
    prints them) and its verdict in words beside it, the stated Brier imputed and the tournament
    take; the metric ranked ``by`` takes the tournament take's place when it is not one of those
    (valid answers and cost are under "Every metric"; a FAILED role says too few were valid).
    Pooled cohorts drew different markets: their difficulty-adjusted Briers (null within one
    cohort) take the places of the stated imputed Brier and the take."""
    brier = suffixed("brier", implied)
    keys = [brier if k == "brier" else k for k in KEY_FIGURES]
    adjusted = [
        k for k in (suffixed("brier_adjusted", implied), "stated_brier_adjusted") if _any_value(table, k)
    ]
    if adjusted:
        keys = [*keys[:2], *adjusted]
    boxed = {brier if k == "brier" else k for k in WITH_INTERVAL}
    if by not in keys:  # the metric ranked by, with its interval
        keys = [*keys[: SHOWN - 1], by]
        boxed.add(by)
    words = {"return_pct": pl.col("return_label"), brier: _brier_words(implied)}
    exprs = [pl.col("rank").alias("#"), pl.col("agent").alias("Agent"), _role().alias("Role")]
    config: Config = {
        "#": st.column_config.NumberColumn(width=WIDTHS["#"]),
        "Agent": st.column_config.TextColumn(width=WIDTHS["Agent"]),
        "Role": st.column_config.TextColumn(width=WIDTHS["Role"], help=ROLE_HELP),
    }
    for metric in (BY_KEY[k] for k in keys):
        title = metric.display_label(implied)
        width = WIDTHS.get(metric.fmt, WIDTHS["cost"])
        if metric.interval and metric.key in boxed:
            exprs.append(_with_interval(metric.key, metric.fmt).alias(title))
            config[title] = st.column_config.TextColumn(
                width=WIDTHS["percent" if metric.fmt == "percent" else "score"],
                help=f"{metric.description}; 95% interval",
            )
        else:
            columns, styles = _column(metric, implied)
            exprs.append(columns[0])  # the value alone: its interval is under "Every metric"
            width = WIDTHS["plain"] if metric.fmt == "score" else width
            config[title] = {**styles[title], "width": width, "help": metric.description}
        if metric.key in words:
            heading = f"{title.split(' (')[0].removesuffix(' %')} reads"
            exprs.append(words[metric.key].alias(heading))
            config[heading] = st.column_config.TextColumn(width=WIDTHS["words"], help=WORDS_HELP)
    return table.select(exprs), config


def place_notes(
    notes: list[str], compact: list[str], every: list[str], pinned: Collection[str] = ()
) -> tuple[list[str], list[str]]:
    """Notes under the compact table (every column they name is in it) and under "Every metric"
    (they name one only that table has); a note naming no column, and a ``pinned`` one (the
    reason for a sign the compact table shows), stays under the compact table."""
    titles = sorted({*compact, *every} - {"#", "Agent"}, key=len, reverse=True)
    here: list[str] = []
    there: list[str] = []
    for note in notes:
        if note in pinned:
            here.append(note)
            continue
        named, rest = [], note
        for title in titles:  # longest first: "Brier (bets) (kelly)" before "Brier (bets)"
            if title in rest:
                named.append(title)
                rest = rest.replace(title, "")
        (here if all(t in compact for t in named) else there).append(note)
    return here, there


def _any_value(table: pl.DataFrame, key: str) -> bool:
    return table[key].null_count() < len(table)


def _role() -> pl.Expr:
    """What the agent is (a failed one says so first), with the signs of the flags about its
    stated forecasts; the bet-reading flag goes beside the Brier it concerns."""
    role = (
        pl.when(pl.col("failed").cast(pl.Boolean))
        .then(pl.lit("FAILED"))
        .when(pl.col("baseline"))
        .then(pl.lit("baseline"))
        .when(pl.col("external"))
        .then(pl.lit("external"))
        .otherwise(pl.lit("agent"))
    )
    marks = [pl.when(pl.col(f.column)).then(pl.lit(f.mark)) for f in FLAGS if not _about_bets(f.column)]
    return pl.concat_str(role, *marks, separator=" ", ignore_nulls=True)


def _about_bets(column: str) -> bool:
    return column.startswith("brier_incoherent")


def _brier_words(implied: Reading) -> pl.Expr:
    """The Brier label in a word ("Fair", the legend says near random), with the flag's sign when
    the bet reading contradicts the bets (the label says nothing about them then)."""
    flag = next(f for f in FLAGS if f.column == suffixed("brier_incoherent", implied))
    label = pl.col(suffixed("brier_label", implied)).str.replace(r" \(.*\)$", "")
    flagged = pl.col(flag.column).fill_null(False)
    return pl.when(flagged).then(pl.concat_str(label, pl.lit(f" {flag.mark}"))).otherwise(label)


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
