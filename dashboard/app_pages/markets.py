"""Markets: a filterable list, then one market's price history with every agent's trades and its end."""

from __future__ import annotations

import polars as pl
import streamlit as st

from arena import figures
from arena.reports.escaping import streamlit_literal, web_address
from dashboard import log_tables, queries, widgets

STATUSES = {"open": "Open", "resolved": "Resolved", "VOID": "Voided"}

ctx = widgets.context()
st.title("Markets")
widgets.cohort_caption(ctx)
listed = queries.markets(ctx.url, None if ctx.choice == widgets.ALL else ctx.choice, ctx.data)
if listed.is_empty():
    widgets.stop_with(
        "No markets yet: rounds store the markets they offer. Run `arena demo` or `arena markets sync`."
    )

status = (
    pl.when(pl.col("resolution").is_null())
    .then(pl.lit("open"))
    .when(pl.col("resolution") == "VOID")
    .then(pl.lit("VOID"))
    .otherwise(pl.lit("resolved"))
)
trades = queries.frames(ctx.url, ctx.ids, ctx.data).fills
counts = trades.group_by("market_id").agg(trades=pl.len())
listed = listed.with_columns(state=status).join(counts, on="market_id", how="left")
listed = listed.with_columns(pl.col("trades").fill_null(0)).sort(
    ["trades", "question"], descending=[True, False]
)
known = sorted(listed["category"].drop_nulls().unique().to_list())
c1, c2, c3, *c4 = st.columns([2, 1, 1, 1] if known else [2, 1, 1])  # no category: no filter for it
text = c1.text_input("Search questions", key="markets_search", placeholder="e.g. Bitcoin")
venues = c2.multiselect("Venue", sorted(listed["venue"].unique().to_list()), key="markets_venue")
states = c3.multiselect("Status", list(STATUSES), format_func=STATUSES.__getitem__, key="markets_state")
categories = c4[0].multiselect("Category", known, key="markets_category") if known else []
shown = listed
if text:
    shown = shown.filter(
        pl.col("question").str.contains(text, literal=True)
        | pl.col("question").str.to_lowercase().str.contains(text.lower(), literal=True)
    )
for column, chosen in (("venue", venues), ("state", states), ("category", categories)):
    if chosen:
        shown = shown.filter(pl.col(column).is_in(chosen))
st.caption(f"{len(shown)} of {len(listed)} markets")
view, config = log_tables.markets(shown)
widgets.table(view, column_config=config, height=min(420, 38 + 35 * len(shown)))
if shown.is_empty():
    widgets.stop_with("No market matches these filters.")

questions = dict(zip(shown["market_id"], shown["question"], strict=True))
market_id = st.selectbox(
    "Market", list(questions), format_func=lambda m: f"{questions[m]} · {m}", key="markets_pick"
)
market = shown.filter(pl.col("market_id") == market_id).row(0, named=True)
prices = queries.price_history(ctx.url, market_id, ctx.data)
trades = trades.filter(pl.col("market_id") == market_id)
resolution = (market["resolution"], market["resolved_at"]) if market["resolution"] else None
if prices.is_empty():
    st.info("No YES price recorded for this market (it may not be a YES/NO market).", icon=":material/info:")
else:
    st.plotly_chart(
        figures.market_history(
            prices, trades, widgets.styles(ctx), title=market["question"], resolution=resolution
        )
    )
ended = (
    f"resolved **{streamlit_literal(market['resolution'])}** on {market['resolved_at']:%Y-%m-%d}"
    if resolution
    else "not resolved yet"
)
address = web_address(market["url"])
link = f" · [venue page]({address})" if address else ""
st.caption(
    f"{streamlit_literal(market_id)} · {streamlit_literal(market['venue'])} · {ended} · "
    f"{len(trades)} trade(s) by agents in view{link}"
)
