"""Agent: its equity curve, positions, every decision with its reasoning, forecasts, cost and latency."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import polars as pl
import streamlit as st

from arena import figures
from arena.reports.escaping import streamlit_literal, visible_controls
from arena.reports.formatting import MISSING, money, number, percent, share, signed_money
from dashboard import log_tables, queries, widgets

AGENT_KEY = "agent"
PAGE_SIZE = 20
TOOL_TEXT_CHARS = 300  # of a tool call's arguments and result, in the table (the report has them all)


def tool_call_rows(calls: pl.DataFrame) -> pl.DataFrame:
    """Tool calls as plain-text rows: text clipped, or its size and digest when it was too long to store."""

    def shown(name: str) -> pl.Expr:
        clipped = pl.col(name).str.slice(0, TOOL_TEXT_CHARS)
        kept = pl.when(pl.col(name).str.len_chars() > TOOL_TEXT_CHARS).then(clipped + " …").otherwise(clipped)
        digest = pl.format("({} characters, sha256 {})", pl.col(f"{name}_chars"), pl.col(f"{name}_sha256"))
        return (
            pl.when(pl.col(name).is_null())
            .then(digest)
            .otherwise(kept)
            .map_elements(visible_controls, return_dtype=pl.String)
        )

    return calls.select(
        pl.col("seq").alias("#"),
        pl.col("step").alias("Step"),
        pl.col("tool").alias("Tool"),
        pl.when(pl.col("is_error")).then(pl.lit("error")).otherwise(pl.lit("ok")).alias("Result kind"),
        (pl.col("latency_s") * 1000).round(1).alias("ms"),
        shown("arguments").alias("Arguments"),
        shown("result").alias("Result"),
    )


# Widths that fit a decision's box in a 1400-px window, in rows tall enough for the texts to wrap.
TOOL_CALL_COLUMNS = {
    "#": st.column_config.NumberColumn(width=32),
    "Step": st.column_config.NumberColumn(width=44),
    "Tool": st.column_config.TextColumn(width=110),
    "Result kind": st.column_config.TextColumn("Kind", width=52, help="ok, or error when the tool failed"),
    "ms": st.column_config.NumberColumn(width=60, help="How long the call took, in milliseconds"),
    "Arguments": st.column_config.TextColumn(width=230),
    "Result": st.column_config.TextColumn(width=330),
}


def default_agent(scores: pl.DataFrame) -> str:
    """The agent the page opens on: the best by return that is not a baseline (the leader is often
    one), else the leader."""
    contestants = scores.filter(~pl.col("baseline"))
    return str((scores if contestants.is_empty() else contestants)["agent"][0])


ctx = widgets.context()
cohort_id = widgets.single_cohort(ctx)
st.title("Agent")
roster = queries.agents(ctx.url, cohort_id, ctx.data)
if roster.is_empty():
    widgets.stop_with("This cohort has no agents.")
scores = queries.scores(ctx.url, ctx.ids, ctx.data, "return_pct")
names = scores["agent"].to_list()
if st.session_state.get(AGENT_KEY) not in names:  # first visit: a shared link, else the default
    linked = st.query_params.get(AGENT_KEY)
    st.session_state[AGENT_KEY] = linked if linked in names else default_agent(scores)
agent = str(st.selectbox("Agent", names, key=AGENT_KEY, help="Ordered by return, best first."))
st.query_params[AGENT_KEY] = agent  # a reload or a shared link reopens this agent
seat = roster.filter(pl.col("agent") == agent).row(0, named=True)
style = widgets.styles(ctx)[agent]
row: dict[str, Any] = scores.filter(pl.col("agent") == agent).row(0, named=True)

kind = f"{seat['kind']}{' (baseline)' if seat['baseline'] else ''}"
st.caption(
    f"{kind} · model {streamlit_literal(seat['model_id'] or 'none')} · cohort {streamlit_literal(cohort_id)}"
)
pnl = row.get("pnl")
cols = st.columns(5)
cols[0].metric("Value", money(row.get("value")), **widgets.signed_delta(pnl, signed_money(pnl)))
cols[1].metric("Return", percent(row.get("return_pct"), signed=True))
cols[2].metric(  # two readings: the kelly one under the fa one (side by side they were cut)
    "Brier (bets), fa",
    number(row.get("brier")),
    f"kelly {number(row.get('brier_kelly'))}",
    delta_arrow="off",
    delta_color="off",
    help="Bet sizes read as forecasts two ways (leaderboard legend) · 0 perfect · 0.25 = always 50%",
)
cols[3].metric(
    "Valid answers",
    share(row.get("valid_rate")),
    f"{row.get('decisions', 0)} decisions",
    delta_arrow="off",
    delta_color="off",
)
cols[4].metric("Model cost", f"${Decimal(str(row.get('cost') or 0)):,.4f}")

marks = queries.equity(ctx.url, cohort_id, ctx.data).filter(pl.col("agent") == agent)
if not marks.is_empty():
    st.plotly_chart(figures.equity_curves(marks, {agent: style}, title=f"Equity curve of {agent}"))

st.subheader("Positions")
held = queries.positions(ctx.url, cohort_id, ctx.data).filter(pl.col("agent") == agent)
listed = queries.markets(ctx.url, cohort_id, ctx.data)
listed_names = log_tables.market_names(listed)
if held.is_empty():
    st.info("No positions: this agent has not placed a valid bet yet.", icon=":material/info:")
else:
    opened, closed = held.filter(pl.col("status") == "open"), held.filter(pl.col("status") != "open")
    parts = [(f"Open ({len(opened)})", opened), (f"Closed and settled ({len(closed)})", closed)]
    if opened.is_empty():  # a finished agent: open on what it held, not on an empty tab
        parts.reverse()
    for tab, (_, part) in zip(st.tabs([label for label, _ in parts]), parts, strict=True):
        view, config = log_tables.positions(part, listed_names, held=part is opened)
        widgets.table(view, tab, column_config=config)

decisions = queries.decisions(ctx.url, cohort_id, ctx.data, agent)
st.subheader("Forecasts, cost and latency")
left, right = st.columns(2)
bets = queries.bets(ctx.url, ctx.ids, ctx.data).filter(pl.col("agent") == agent)
stated = queries.stated(ctx.url, ctx.ids, ctx.data).filter(
    (pl.col("agent") == agent) & (pl.col("outcome") == "YES")
)
pairs = bets.join(
    stated, left_on=["market_id", "filled_at"], right_on=["market_id", "stated_at"], how="inner"
)
points = pairs.join(listed_names, on="market_id", how="left").select(
    "question", implied="forecast_yes", stated="p"
)
if points.is_empty():
    left.caption(
        "No bet came with a stated probability for the same market, so there is nothing to compare yet."
    )
else:
    left.plotly_chart(figures.stated_vs_implied(points, style))
if decisions.is_empty():
    right.caption("No decisions yet.")
elif (decisions["prompt_tokens"] + decisions["completion_tokens"]).sum() == 0:
    right.caption("No model calls (no tokens, no cost): nothing to chart for this agent.")
else:
    right.plotly_chart(figures.decision_costs(decisions, style))

st.subheader("Decisions")
show_raw = st.toggle("Show raw prompts and responses", key="agent_raw")
research = queries.tool_calls(ctx.url, cohort_id, ctx.data, agent)
newest = decisions.sort("round_index", descending=True)
pages = max(1, -(-len(newest) // PAGE_SIZE))
page = st.number_input(f"Page (of {pages}, newest first)", 1, pages, 1, key="agent_page") if pages > 1 else 1
for d in newest.slice((page - 1) * PAGE_SIZE, PAGE_SIZE).iter_rows(named=True):
    actions = json.loads(d["actions_json"] or "[]")
    icon = {
        "done": ":material/check_circle:",
        "rejected": ":material/block:",
        "error": ":material/error:",
    }.get(d["status"], ":material/pending:")
    when = f"{d['scheduled_at']:%Y-%m-%d %H:%M} UTC"
    title = f"Round {d['round_index']} · {when} · {d['status']} · {len(actions)} action(s)"
    with st.expander(title, icon=icon):
        if d["error"]:
            st.error(streamlit_literal(f"{d['error_kind'] or 'error'}: {d['error']}", starts_block=True))
        st.markdown("**Reasoning**")
        st.text(visible_controls(d["reasoning"] or MISSING))  # the model's words: never Markdown
        if actions:
            view, config = log_tables.actions(actions, listed_names, held)
            widgets.table(view, column_config=config)
        stated_now = json.loads(d["probabilities_json"] or "{}")
        if stated_now:
            st.caption("Stated probabilities")
            view, config = log_tables.forecasts(stated_now, listed_names)
            widgets.table(view, column_config=config)
        tokens = d["prompt_tokens"] + d["completion_tokens"]
        cost = f"${Decimal(str(d['cost_usd'])):,.6f}"
        cash = f"Cash at start {money(d['cash_at_start'])} · max bet {money(d['max_bet'])}"
        st.caption(
            f"{cash} · {tokens:,} tokens · cost {cost} · {d['latency_s']:.2f} s · {d['attempts']} attempt(s)"
        )
        calls = research.filter(pl.col("decision_id") == d["decision_id"])
        if not calls.is_empty():
            st.markdown(f"**Tool calls ({len(calls)})**")
            widgets.table(
                tool_call_rows(calls), column_config=TOOL_CALL_COLUMNS, row_height=widgets.WRAPPED_ROW
            )
        if show_raw:
            st.code(d["raw_prompt"] or "(no prompt recorded)", language=None, wrap_lines=True)
            st.code(d["raw_response"] or "(no response recorded)", language=None, wrap_lines=True)
