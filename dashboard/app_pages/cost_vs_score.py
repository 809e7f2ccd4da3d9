"""Cost vs score: what the LLM agents' model calls cost against their Brier skill and return,
with dollars per point of Brier skill and per 1% of return."""

from __future__ import annotations

import streamlit as st

from arena.figures.costs import cost_scatter
from dashboard import view_queries, view_tables, widgets

DEFINITIONS = """
- **Point of Brier skill**: 0.01 of Brier improvement over a reference, on the agent's resolved
  bets (the cohort's headline reading of a bet as a forecast). *vs 50%*: the reference is always
  saying 50% (Brier 0.25), so points = (0.25 − Brier) × 100. *vs market*: the reference is the
  market price the same bets were filled at.
- **1% of return**: one percentage point of return (P/L over the bankroll).
- **$ per point / per 1%**: model cost divided by points or by return. With no improvement (a Brier
  no better than the reference, a return at or below 0), no scored bet or no recorded cost there
  is nothing to divide by: the table shows "—" and says why (e.g. "no skill: Brier 0.433 ≥ 0.250").
- **No credit** (¶): an agent whose reading contradicts its own bets (most of them read as less
  likely than the price paid, as tiny bets on longshots are) earns no points of skill from that
  Brier, however low it is: its points are left out of the chart and the table says why.
"""

ctx = widgets.context()
st.title("Cost vs score")
widgets.cohort_caption(ctx)
table = view_queries.value_for_money(ctx.url, ctx.ids, ctx.data)
if table.is_empty():
    widgets.stop_with("No agent here recorded model usage (tokens or cost), so there is no cost to weigh.")
styles = widgets.styles(ctx)
left, right = st.columns(2)
left.plotly_chart(
    cost_scatter(table, "points", styles, axis="Brier points vs always 50%", title="Cost vs Brier skill")
)
right.plotly_chart(cost_scatter(table, "return_pct", styles, axis="Return (%)", title="Cost vs return"))
view, config = view_tables.value_for_money(table)
widgets.table(view, column_config=config)
st.markdown(DEFINITIONS)
