"""Cohort: portfolio values over time, P/L by agent, how every round went and what failed."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import polars as pl
import streamlit as st

from arena import figures
from arena.cohorts.export import config_toml
from arena.figures.activity import STATUS_COLOURS
from arena.reports.escaping import streamlit_literal
from arena.reports.formatting import money
from dashboard import log_tables, queries, widgets

STATUS_WORDS = {"done": "valid", "rejected": "rejected", "error": "errors", "missed": "missed",
                "claimed": "still deciding"}  # fmt: skip


def rounds_alike(rounds: pl.DataFrame) -> str | None:
    """One line when every round ended the same way (how many agents in each outcome), else None."""
    counted = [c for c in STATUS_COLOURS if c in rounds.columns]
    if len(rounds) < 2 or rounds.select(counted).unique().height != 1:
        return None
    first = rounds.row(0, named=True)
    parts = [f"{first[c]} {STATUS_WORDS[c]}" for c in counted if first[c]]
    return f"Decisions per round: the same in all {len(rounds)} rounds, {', '.join(parts) or 'none'} each."


ctx = widgets.context()
cohort_id = widgets.single_cohort(ctx)
cohort = ctx.cohort
config: dict[str, Any] = queries.cohort_config(ctx.url, cohort_id, ctx.data)
stored_bankroll = config.get("rules", {}).get("bankroll")  # shown as stored, never a default
bankroll = None if stored_bankroll is None else Decimal(str(stored_bankroll))
planned = config.get("schedule", {}).get("rounds")

st.title(f"Cohort · {streamlit_literal(cohort['name'])}")
widgets.cohort_caption(ctx)
cols = st.columns(4)
cols[0].metric("Status", str(cohort["status"]).capitalize(), help=f"A {cohort['mode']} cohort")
done = f"{cohort['rounds_done']} / {planned}" if planned else str(cohort["rounds_done"])
cols[1].metric("Rounds finished", done, help=None if planned else "Rounds run until the replay data ends.")
cols[2].metric("Agents", cohort["agents"])
cols[3].metric("Bankroll per agent", money(bankroll))

rounds = queries.rounds(ctx.url, cohort_id, ctx.data)
marks = queries.equity(ctx.url, cohort_id, ctx.data)
styles = widgets.styles(ctx)
if marks.is_empty():
    st.info(
        "No portfolio marks yet: agents are marked after their first round. "
        "Run `arena replay` for a replay cohort, or keep `arena serve` running for a live one.",
        icon=":material/hourglass_top:",
    )
else:
    units = ["$"] if bankroll is None else ["$", "%"]  # a return needs the stored bankroll
    unit = st.segmented_control("Show", units, default="$", required=True, key="cohort_unit")
    st.plotly_chart(
        figures.equity_curves(
            marks,
            styles,
            bankroll=None if bankroll is None else float(bankroll),
            percent=unit == "%",
            decision_times=rounds["scheduled_at"].to_list(),
        )
    )
    scores = queries.scores(ctx.url, ctx.ids, ctx.data, "return_pct")
    st.plotly_chart(figures.pnl_bars(scores.drop_nulls("realized_pnl"), styles))

st.subheader("Rounds")
if rounds.is_empty():
    st.info("No round has run yet.", icon=":material/hourglass_top:")
else:
    alike = rounds_alike(rounds)
    if alike:
        st.caption(alike)  # eight identical bars say less than this line
    else:
        st.plotly_chart(figures.round_outcomes(rounds))
    view, column_config = log_tables.rounds(rounds)
    widgets.table(view, column_config=column_config)

st.subheader("Errors and rejected decisions")
failures, column_config = log_tables.errors(queries.decisions(ctx.url, cohort_id, ctx.data))
if failures.is_empty():
    st.success("Every decision so far was valid.")
else:
    widgets.table(failures, column_config=column_config, row_height=widgets.WRAPPED_ROW)

with st.expander("Frozen configuration (secrets redacted)"):
    # The same TOML text `arena cohort export` prints: `arena replay` of it reruns the cohort.
    header = [f"cohort {cohort_id}, frozen config (secrets redacted)"]
    st.code(config_toml(config, header=header), language="toml", wrap_lines=True)
