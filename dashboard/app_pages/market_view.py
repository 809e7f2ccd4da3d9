"""Per market: one market's price history with every agent's stated probability and bets over
time, and each agent's position and P/L on it."""

from __future__ import annotations

import polars as pl
import streamlit as st

from arena.figures.market_forecasts import market_forecasts
from arena.reports.escaping import streamlit_literal, visible_controls
from arena.scoring.load.frames import BUY
from dashboard import queries, view_queries, view_tables, widgets

ctx = widgets.context()
cohort_id = widgets.single_cohort(ctx)
st.title("Per market")
widgets.cohort_caption(ctx)
listed = queries.markets(ctx.url, cohort_id, ctx.data)
if listed.is_empty():
    widgets.stop_with("This cohort has offered no market yet: rounds store the markets they offer.")
stances = view_queries.stances(ctx.url, ctx.ids, ctx.data).filter(pl.col("cohort_id") == cohort_id)
bettors = stances.group_by("market_id").agg(agents=pl.len())
listed = (
    listed.join(bettors, on="market_id", how="left")
    .with_columns(pl.col("agents").fill_null(0))
    .sort(["agents", "question"], descending=[True, False])
)
questions = dict(zip(listed["market_id"], listed["question"], strict=True))
market_id = str(
    st.selectbox(
        "Market",
        list(questions),
        format_func=lambda m: f"{questions[m]} · {m}",
        key="market_view_pick",
        help="Markets most agents bet on first.",
    )
)
market = listed.filter(pl.col("market_id") == market_id).row(0, named=True)
st.text(visible_controls(market["question"]))  # the creator's words: never Markdown
ended = f"resolved {market['resolution']}" if market["resolution"] else "not resolved yet"
st.caption(
    f"{streamlit_literal(market_id)} · {streamlit_literal(market['venue'])} · {streamlit_literal(ended)}"
)
with st.expander("Description"):
    st.text(visible_controls(queries.market_description(ctx.url, market_id, ctx.data) or "(no description)"))

prices = queries.price_history(ctx.url, market_id, ctx.data)
scored = queries.frames(ctx.url, ctx.ids, ctx.data)
in_market = (pl.col("cohort_id") == cohort_id) & (pl.col("market_id") == market_id)
forecasts = queries.stated(ctx.url, ctx.ids, ctx.data).filter(in_market & (pl.col("outcome") == "YES"))
bets = scored.fills.filter(in_market & (pl.col("kind") == BUY))
resolution = (market["resolution"], market["resolved_at"]) if market["resolution"] else None
if prices.is_empty() and forecasts.is_empty() and bets.is_empty():
    st.info("No YES price, forecast or bet recorded for this market yet.", icon=":material/info:")
else:
    figure = market_forecasts(
        prices,
        forecasts,
        bets,
        widgets.styles(ctx),
        title="Price, stated P(YES) and bets",
        resolution=resolution,
    )
    st.plotly_chart(figure)
    st.caption(
        "Black: the YES price. Lines: each agent's stated P(YES), standing until its next statement. "
        "Markers: bets at the YES-equivalent price paid (▲ YES, ▼ NO), their area growing with the stake."
    )

st.subheader("Positions and P/L")
mine = stances.filter(pl.col("market_id") == market_id)
if mine.is_empty():
    st.info("No agent of this cohort bet on this market.", icon=":material/info:")
else:
    held = queries.positions(ctx.url, cohort_id, ctx.data).filter(pl.col("market_id") == market_id)
    view, config = view_tables.market_positions(mine, held)
    widgets.table(view, column_config=config)
    st.caption(
        "P/L on this market: realised by sells and settlements, plus open shares at the latest price, "
        "minus what they cost. Right: the side staked most on won (blank until the market resolves)."
    )
