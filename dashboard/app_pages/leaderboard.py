"""Leaderboard: every agent's scores with bootstrap intervals, baselines marked, a plain legend."""

from __future__ import annotations

from typing import cast

import polars as pl
import streamlit as st

from arena.reports.escaping import streamlit_literal
from arena.reports.formatting import percent, signed_money
from arena.reports.notes import adjusted_notes, stated_notes
from arena.scoring import SORTABLE
from arena.scoring.board.notes import FLAGS, chart_flags, marked_notes
from arena.scoring.board.notes import LEGEND as LEGEND_LINE
from arena.scoring.metrics.registry import BY_KEY
from dashboard import queries, tables, widgets

CHARTED = (
    "return_pct",
    "brier",
    "brier_kelly",
    "bss_market",
    "stated_brier_imputed",
    "stated_brier",
    "stated_brier_overall",
    "log_score",
    "rel_log_score",
    "brier_adjusted",
    "brier_adjusted_kelly",
    "stated_brier_adjusted",
)
LEGEND = """
- **Return** — profit or loss over the bankroll, with positions valued at the latest market price.
- **Brier (bets)** — how good the agent's bets were as forecasts, read two ways. *fa*: a bet's
  size against the largest allowed bet is the probability of its side (a max bet = 100%), so a
  small bet reads as a forecast *against* its side. *kelly*: the probability at which the bet is
  the full-Kelly stake, p + φ·(1 − p) (p the price paid, φ the bet over the cash). The cohort's
  `scoring.implied` picks the headline one; the other is shown beside it. 0 is perfect, 0.25 is
  what always saying 50% scores, 1 is always wrong. Only bets on resolved markets count.
  A note under the table flags agents whose Brier label and return label point opposite ways,
  and **¶** agents whose *fa* reading contradicts their own bets (most of them read as less likely
  than the price paid: tiny bets on longshots score a near-perfect Brier while losing money):
  their Brier, label and skill say nothing about those bets.
- **Skill vs market** — 1 − the agent's Brier / the market price's Brier on the same bets: above 0
  beats the market, below 0 does worse than just trusting the price.
- **Brier / log score (stated)** — the same idea for the probabilities the agent wrote down,
  weighted by how long each forecast stood. Log score: higher is better, 0 is perfect.
- **Brier (stated, imputed)** — the fair comparison of stated forecasts: every agent that stated
  anything is scored on every market offered to it in every round; where it stated nothing, the
  market price of that round stands in, or 50% where the round hid the price (*imputed share*
  says how much). An agent cannot look good by stating only easy markets, nor by staying silent
  (one that never states has no stated score). Markets not resolved yet make stated scores
  *provisional*.
- **Tournament take** — the share of the prize pool under the Metaculus tournament rules: a
  forecast scores ln(forecast / market price) over time, and coverage counts only while the
  price was hidden, so restating the price wins nothing.
- **Brier (stated, overall)** — resolved and still-open stated markets together (open ones against
  their latest price): ForecastBench's score of a forecaster on market questions.
- **Adjusted for market difficulty** — when cohorts are pooled, agents drew different markets;
  a fixed-effects fit of every (agent, market) Brier separates each market's difficulty from each
  agent's skill, and the adjusted Brier is what the agent would score on the average market.
  Few shared markets make its interval wide; a note says why it is missing.
- **External forecasters** — forecasts imported from outside the arena (a human panel, an offline
  model run): scored on the same markets by the same stated rules; they never bet.
- **Leakage guard: off** — an LLM replaying past markets without a declared knowledge cutoff: it
  may already know how they ended, so its scores may not be forecasts at all.
- **95% interval** — the range the score would plausibly take on another draw of markets
  (bootstrap over markets). Wide intervals, or fewer than 30 resolved markets, mean: too early to tell.
- **Role** — *agent* for a contestant, *baseline* for a reference bot, *external* for imported
  forecasts, *FAILED* when too few of the agent's answers were valid (not ranked: its scores say
  nothing about skill; *Valid answers* is under *Every metric*). The signs beside it, whose notes
  under the table say why: *¤* stated selectively (its as-stated scores average what it chose),
  *!* stated prices it was not shown. Sorted by a metric a flag concerns, flagged agents rank below.
- **Return reads**, **Brier reads** — the figure to their left in words, from Excellent to Very
  Poor (*Fair*: at or near random); *¶* marks a Brier whose bet reading contradicts the bets.
- **Baselines** (thin dashed lines, ◆) are simple reference bots: an LLM should beat them before
  claiming skill. The table shows the key figures; every other metric is under *Every metric*.
"""

IMPUTED_PREFIX = "Stated imputed"  # how the shared note names the column the table titles in full

ctx = widgets.context()
st.title("Leaderboard")
widgets.cohort_caption(ctx)
left, _ = st.columns(2)
implied = queries.scoring_choice(ctx.url, ctx.ids, ctx.data).implied


def _label(key: str) -> str:
    return BY_KEY[key].display_label(implied)


by = left.selectbox("Rank by", list(SORTABLE), format_func=_label, key="leaderboard_by")
table = queries.scores(ctx.url, ctx.ids, ctx.data, by)
if table.is_empty():
    widgets.stop_with("This cohort has no agents yet.")

leader = table.row(0, named=True)
cols = st.columns(4)
cols[0].metric(
    "Leader",
    leader["agent"],
    help=f"Best {_label(by).lower()} (sorted {'up' if not SORTABLE[by] else 'down'})",
)
cols[1].metric(
    "Leader's P/L",
    signed_money(leader["pnl"]),
    **widgets.signed_delta(leader["return_pct"], percent(leader["return_pct"], signed=True)),
)
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

# The chart is a tab of its own, run only when opened: the browser spends over a second parsing
# Plotly's script (4.7 MB), and a table sent beside a chart is drawn only after that.
table_tab, chart_tab = st.tabs(["Table", "Chart"], key="leaderboard_view", on_change="rerun")
rows = list(table.iter_rows(named=True))
notes = [n.replace(IMPUTED_PREFIX, _label("stated_brier_imputed"), 1) for n in stated_notes(rows)]
if ctx.choice == widgets.ALL:  # within one cohort nothing is adjusted, and every row would say so
    notes += adjusted_notes(rows)
signs = {flag.mark for flag in FLAGS}  # shown in the table: their notes open with the sign, and stay in view
flagged = [
    (f"{mark} {n}" if mark in signs else f"Note: {n}", mark in signs)
    for mark, n in marked_notes(table, implied)
]
notes += [note for note, _ in flagged]
pinned = {note for note, sign in flagged if sign}
view, config = tables.leaderboard(table, implied, by)
everything, everything_config = tables.every_metric(table, implied)
here, there = tables.place_notes(notes, view.columns, everything.columns, pinned)
with table_tab:
    st.caption(
        "**Role**: agent, baseline (a reference bot), external (imported forecasts) or FAILED (not "
        "ranked). **Return reads**, **Brier reads**: the figure to their left in words. Signs: "
        + streamlit_literal(LEGEND_LINE)
    )
    widgets.table(view, column_config=config)
    for note in here:
        st.caption(streamlit_literal(note))  # notes name agents: data, shown as written
    every = st.expander("Every metric", key="leaderboard_every", on_change="rerun")
    if every.open:
        with every:
            widgets.table(everything, column_config=everything_config)
            for note in there:
                st.caption(streamlit_literal(note))
    with st.expander("What these numbers mean", expanded=False):
        st.markdown(LEGEND)

if chart_tab.open:
    with chart_tab:
        # A select box, not a row of buttons: eight metric names never fit in a row.
        picker, _ = st.columns(2)
        metric = picker.selectbox("Metric", list(CHARTED), format_func=_label, key="leaderboard_chart")
        chosen = BY_KEY[str(metric)]
        if table.filter(pl.col(chosen.key).is_not_null()).is_empty():
            st.caption(f"No agent has a {_label(chosen.key).lower()} score yet.")
        else:
            from arena import figures  # plotly: imported only when the chart is shown

            st.plotly_chart(
                figures.leaderboard_intervals(
                    table,
                    chosen.key,
                    widgets.styles(ctx),
                    axis=chosen.axis_title(implied),
                    reference=chosen.reference,
                    flags=chart_flags(table, chosen.key),
                )
            )
