"""Leaderboard: every agent's scores with bootstrap intervals, baselines marked, a plain legend."""

from __future__ import annotations

from typing import cast

import polars as pl
import streamlit as st

from arena import figures
from arena.reports.formatting import percent, signed_money
from arena.reports.notes import stated_notes
from arena.scoring import SORTABLE
from dashboard import queries, tables, widgets

RANK_BY = {
    "return_pct": "Return",
    "brier": "Brier (bet sizes)",
    "bss_market": "Skill vs market",
    "stated_brier_imputed": "Brier (stated, imputed)",
    "stated_brier": "Brier (stated, as stated)",
    "log_score": "Log score",
    "win_rate": "Win rate",
    "sharpe": "Sharpe ratio",
}
CHART_METRICS = {
    "return_pct": "Return",
    "brier": "Brier (bets)",
    "bss_market": "Skill vs market",
    "stated_brier_imputed": "Brier (stated, imputed)",
    "stated_brier": "Brier (stated, as stated)",
    "log_score": "Log score",
    "rel_log_score": "Log score vs market",
}
LEGEND = """
- **Return** — profit or loss over the bankroll, with positions valued at the latest market price.
- **Brier (bet sizes)** — how good the agent's bets were as forecasts. A bet's size against the
  largest allowed bet is read as its confidence (a max bet = 100%). 0 is perfect, 0.25 is what
  always saying 50% scores, 1 is always wrong. Only bets on resolved markets count.
- **Skill vs market** — 1 − the agent's Brier / the market price's Brier on the same bets: above 0
  beats the market, below 0 does worse than just trusting the price.
- **Brier / log score (stated)** — the same idea for the probabilities the agent wrote down,
  weighted by how long each forecast stood. Log score: higher is better, 0 is perfect.
- **Brier (stated, imputed)** — the fair comparison of stated forecasts: every agent is scored on
  every market offered to it in every round; where it stated nothing, the market price of that
  round stands in (*imputed share* says how much). An agent cannot look good by stating only
  easy markets. Markets not resolved yet make stated scores *provisional*.
- **Leakage guard: off** — an LLM replaying past markets without a declared knowledge cutoff: it
  may already know how they ended, so its scores may not be forecasts at all.
- **95% interval** — the range the score would plausibly take on another draw of markets
  (bootstrap over markets). Wide intervals, or fewer than 30 resolved markets, mean: too early to tell.
- **Baselines** (grey, dashed, ◆) are simple reference bots: an LLM should beat them before
  claiming skill.
"""

ctx = widgets.context()
st.title("Leaderboard")
widgets.cohort_caption(ctx)
left, right = st.columns([1, 2])
by = left.selectbox("Rank by", list(RANK_BY), format_func=RANK_BY.__getitem__, key="leaderboard_by")
seed = 0 if ctx.choice == widgets.ALL else int(ctx.cohort["seed"])
table = queries.scores(ctx.url, ctx.ids, ctx.data, by, seed)
if table.is_empty():
    widgets.stop_with("This cohort has no agents yet.")

leader = table.row(0, named=True)
cols = st.columns(4)
cols[0].metric(
    "Leader",
    leader["agent"],
    help=f"Best {RANK_BY[by].lower()} (sorted {'up' if not SORTABLE[by] else 'down'})",
)
cols[1].metric("Leader's P/L", signed_money(leader["pnl"]), percent(leader["return_pct"], signed=True))
cols[2].metric(
    "Agents", len(table), f"{int(table['baseline'].sum())} baselines", delta_color="off", delta_arrow="off"
)
# An integer column's max is an int or None (polars types it as any Python literal).
cols[3].metric("Resolved markets", int(cast(int | None, table["resolved_markets"].max()) or 0))

if int(table["resolved_bets"].sum()) == 0:
    st.info(
        "No bet has resolved yet, so outcome-based scores (Brier, win rate) and their intervals are "
        "still empty. Portfolio values are marked to market meanwhile; check back when markets resolve.",
        icon=":material/hourglass_top:",
    )
elif bool(table["few_markets"].any()):
    st.warning(
        "Some agents have fewer than 30 resolved markets: their intervals are wide, rankings tentative."
    )

metric = right.segmented_control(
    "Chart",
    list(CHART_METRICS),
    format_func=CHART_METRICS.__getitem__,
    default="return_pct",
    required=True,
    key="leaderboard_chart",
)
if table.filter(pl.col(metric).is_not_null()).is_empty():
    st.caption(f"No agent has a {CHART_METRICS[metric].lower()} score yet.")
else:
    st.plotly_chart(figures.leaderboard_intervals(table, metric, widgets.styles(ctx)))

view, config = tables.leaderboard(table)
widgets.table(view, column_config=config)
for note in stated_notes(list(table.iter_rows(named=True))):
    st.caption(note)
with st.expander("What these numbers mean", expanded=False):
    st.markdown(LEGEND)
