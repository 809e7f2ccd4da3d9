"""Tables of the Cohort, Agent and Markets pages, as people read them.

Each function turns a frame of the cohort's log or the market catalog, from ``dashboard.queries``,
into ``(frame, column_config)`` for ``st.dataframe``, by the house rules of ``dashboard.tables``:
rounds, errors, positions, a decision's actions and stated forecasts, markets. A market is named
by its question, and linked to its venue only by a plain http(s) address.
"""

from __future__ import annotations

import json

import polars as pl
import streamlit as st

from arena.reports.escaping import web_address
from dashboard.tables import DOLLARS, UTC_TIME, Config

DAY = st.column_config.DatetimeColumn(format="YYYY-MM-DD", width=92, help="The day (UTC)")


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
    config: Config = {  # fits a 1400-px window; the page wraps the message (``widgets.WRAPPED_ROW``)
        "Round": st.column_config.NumberColumn(width=56),
        "Agent": st.column_config.TextColumn(width=110),
        "Status": st.column_config.TextColumn(width=72),
        "Kind": st.column_config.TextColumn(width=120),
        "Message": st.column_config.TextColumn(width=540),
    }
    return view, config


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


def positions(table: pl.DataFrame, names: pl.DataFrame, *, held: bool) -> tuple[pl.DataFrame, Config]:
    """Positions by question, in columns that fit a 1400-px window. ``held``: open positions, with
    their mark, value and staleness. Otherwise closed or settled ones: what each held and had cost
    when it closed (its row ends at zero of both), what that fetched and how the market ended."""
    value = pl.col("shares").cast(pl.Float64) * pl.col("last_price").cast(pl.Float64)
    linked = table.join(names.select("market_id", "link"), on="market_id", how="left")
    market, side = pl.col("question").alias("Market"), pl.col("outcome").alias("Side")
    venue = pl.col("link").alias("Venue")
    at_close = " (when it closed)"
    if held:
        view = linked.select(
            market,
            side,
            pl.col("shares").cast(pl.Float64).alias("Shares"),
            pl.col("cost_basis").cast(pl.Float64).alias("Cost basis"),
            pl.col("last_price").cast(pl.Float64).alias("Mark"),
            value.alias("Value"),
            pl.col("stale").alias("Stale"),
            pl.col("opened_at").alias("Opened"),
            venue,
        )
        widths = {"Market": 330, "Side": 46, "Shares": 72, "Cost basis": 88, "Mark": 56, "Value": 88}
        config: Config = {
            "Shares": st.column_config.NumberColumn(format="%.2f", help="Shares held"),
            "Cost basis": st.column_config.NumberColumn(
                format="dollar", help="What the shares held cost, fees included"
            ),
            "Mark": st.column_config.NumberColumn(format="%.3f", help="Last price of the side held"),
            "Value": DOLLARS,
            "Stale": st.column_config.CheckboxColumn(
                width=52, help="The mark is older than the market's data"
            ),
            "Opened": DAY,
        }
    else:
        view = linked.select(
            market,
            side,
            pl.col("status").alias("Status"),
            pl.col("closing_shares").cast(pl.Float64).alias("Shares"),
            pl.col("closing_cost_basis").cast(pl.Float64).alias("Cost basis"),
            pl.col("closing_amount").cast(pl.Float64).alias("Closed for"),
            pl.col("realized_pnl").cast(pl.Float64).alias("Realised P/L"),
            pl.col("resolution").fill_null("open").alias("Outcome"),
            pl.col("closed_at").alias("Closed"),
            venue,
        )
        widths = {"Market": 250, "Side": 46, "Status": 64, "Shares": 72, "Cost basis": 88}
        config = {
            "Shares": st.column_config.NumberColumn(format="%.2f", help="Shares held" + at_close),
            "Cost basis": st.column_config.NumberColumn(
                format="dollar", help="What the shares held had cost, fees included" + at_close
            ),
            "Closed for": st.column_config.NumberColumn(
                format="dollar",
                width=88,
                help="Cash the closing sale or the settlement paid (a void market refunds the cost)",
            ),
            "Realised P/L": st.column_config.NumberColumn(format="dollar", width=96),
            "Outcome": st.column_config.TextColumn(width=64, help="How the market resolved (open: not yet)"),
            "Closed": DAY,
        }
    config["Market"] = MARKET
    config["Venue"] = LINK
    for title, width in widths.items():  # fixed widths: the row fits beside the sidebar
        config[title] = {**config.get(title, st.column_config.Column()), "width": width}
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
    return view, {"Market": MARKET, "Venue": LINK, "Id": None}  # the id stays in the data, not on screen


def _probabilities(value: object) -> str:
    """``YES 0.75`` (an outcome → probability map), else the stored value as JSON text."""
    if isinstance(value, dict):
        return ", ".join(f"{outcome} {p}" for outcome, p in value.items())
    return json.dumps(value)


def markets(table: pl.DataFrame) -> tuple[pl.DataFrame, Config]:
    """Markets by question; the category column only when some market has one."""
    categories = [] if table["category"].null_count() == len(table) else ["category"]
    view = table.select(
        pl.col("question").alias("Question"),
        pl.col("venue").alias("Venue"),
        *(pl.col(c).fill_null("—").alias("Category") for c in categories),
        pl.col("last_price").alias("Last YES price"),
        pl.col("last_price_at").alias("Price as of"),
        pl.col("resolution").fill_null("open").alias("Resolution"),
        pl.col("resolved_at").alias("Resolved"),
        pl.col("trades").alias("Trades"),
        pl.col("volume").cast(pl.Float64).alias("Volume"),
        pl.col("market_id").alias("Id"),
    )
    config: Config = {  # widths that fit a 1400-px window; the id is kept for links, not shown
        "Question": st.column_config.TextColumn(width=210 if categories else 300),
        "Venue": st.column_config.TextColumn(width=80),
        "Category": st.column_config.TextColumn(width=90),
        "Last YES price": st.column_config.NumberColumn(
            format="%.3f",
            width=96,
            help="The latest YES price seen (synced or shown in a round), at the time beside it",
        ),
        "Price as of": st.column_config.DatetimeColumn(
            format="YYYY-MM-DD HH:mm", width=126, help="When the last YES price was observed (UTC)"
        ),
        "Resolution": st.column_config.TextColumn(width=76),
        "Resolved": DAY,
        "Trades": st.column_config.NumberColumn(width=56),
        "Volume": {**DOLLARS, "width": 90},
        "Id": None,
    }
    return view, config
