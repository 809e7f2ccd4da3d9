"""Compare two agents: equity curves on one chart, scores with intervals and their paired
comparison, and the markets both bet on with who was right."""

from __future__ import annotations

import polars as pl
import streamlit as st

from arena import figures
from arena.figures.pairs import Panel, paired_intervals
from arena.reports.escaping import streamlit_literal
from arena.reports.notes import adjusted_notes
from arena.scoring.board.pairs import head_to_head
from arena.scoring.load.frames import READINGS, suffixed
from arena.scoring.metrics.registry import BY_KEY
from dashboard import queries, view_queries, view_tables, widgets

FIRST, SECOND = "compare_first", "compare_second"
ADJUSTED = (
    "Each agent's Brier over every cohort it took part in, adjusted for how hard its markets were: a "
    "fixed-effects fit of every (agent, market) Brier, the market's own price as reference, gives what "
    "the agent would score on the average market (95% bootstrap interval over markets). Within one "
    "cohort every agent was offered the same markets, so it is given only when cohorts are pooled."
)
EXPLAIN = (
    "The paired comparison is the leaderboard's comparison with the leader, run on these two agents "
    "alone: the difference is first − second on the markets **both** took part in, with a 95% "
    "bootstrap interval over those markets; *p* is the chance of a difference this large if there "
    "were none, and *first better on* the share of common markets where the first agent scored "
    "better (ties count half). With few common markets, treat it as tentative."
)


def _by_shared_markets(stances: pl.DataFrame, first: str, others: list[str]) -> list[str]:
    """``others`` ordered by how many markets they bet on with ``first``, most first (then by return)."""
    theirs = stances.filter(pl.col("agent") == first)["market_id"]
    shared = stances.filter(pl.col("market_id").is_in(theirs.implode()))["agent"].value_counts()
    counts = dict(zip(shared["agent"], shared["count"], strict=True))
    return sorted(others, key=lambda name: -counts.get(name, 0))


STATED = ("stated_", "log_score", "rel_log_score")  # key prefixes of the scores of stated forecasts


def is_stated(key: str) -> bool:
    """A score of stated probabilities (as stated, imputed or adjusted; Brier or log score)."""
    return key.startswith(STATED)


def shown_panels(rows: pl.DataFrame, keys: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """``keys`` split into those some agent of ``rows`` has a value of, and the empty ones (an
    empty panel would leave a blank band in the chart)."""
    drawn = [k for k in keys if any(v is not None and v == v for v in rows[k])]  # NaN != NaN
    return drawn, [k for k in keys if k not in drawn]


ctx = widgets.context()
cohort_id = widgets.single_cohort(ctx)
st.title("Compare two agents")
widgets.cohort_caption(ctx)
scores = queries.scores(ctx.url, ctx.ids, ctx.data, "return_pct")
names = scores["agent"].to_list()
if len(names) < 2:
    widgets.stop_with("This cohort has fewer than two agents: there is nothing to compare.")
left, right = st.columns(2)
first = str(left.selectbox("First agent", names, key=FIRST, help="Ordered by return, best first."))
stances = view_queries.stances(ctx.url, ctx.ids, ctx.data).filter(pl.col("cohort_id") == cohort_id)
others = _by_shared_markets(stances, first, [n for n in names if n != first])
if st.session_state.get(SECOND) not in others:  # first visit, or the first pick took its place
    st.session_state[SECOND] = others[0]
second = str(
    right.selectbox(
        "Second agent", others, key=SECOND, help="Ordered by markets in common with the first agent."
    )
)
styles = widgets.styles(ctx)
implied = queries.scoring_choice(ctx.url, ctx.ids, ctx.data).implied
other = next(r for r in READINGS if r != implied)

marks = queries.equity(ctx.url, cohort_id, ctx.data).filter(pl.col("agent").is_in([first, second]))
if marks.is_empty():
    st.info("Neither agent has a portfolio mark yet: no equity curve to draw.", icon=":material/info:")
else:
    st.plotly_chart(figures.equity_curves(marks, styles, title=f"Portfolio value: {first} and {second}"))

st.subheader("Scores")
keys: tuple[str, ...] = (
    "return_pct",
    suffixed("brier", implied),
    suffixed("bss_market", implied),
    "stated_brier_imputed",
    "log_score",
)
pair_rows = scores.filter(pl.col("agent").is_in([first, second]))
stated_by = set(queries.stated(ctx.url, ctx.ids, ctx.data)["agent"].unique())
neither_stated = not {first, second} & stated_by
if neither_stated:  # imputed scores would compare market prices with market prices
    keys = tuple(k for k in keys if not is_stated(k))
drawn, empty = shown_panels(pair_rows, keys)
panels = [Panel(k, BY_KEY[k].axis_title(implied), BY_KEY[k].reference) for k in drawn]
if panels:
    st.plotly_chart(paired_intervals(pair_rows.sort(pl.col("agent") != first), panels, styles))
if neither_stated:
    st.caption(
        f"Neither {streamlit_literal(first)} nor {streamlit_literal(second)} stated a probability: "
        "their stated forecasts cannot be compared."
    )
if empty:
    titles = ", ".join(BY_KEY[k].display_label(implied) for k in empty)
    st.caption(f"Not drawn: {titles}: neither agent has that score yet.")
pair = view_queries.pair(ctx.url, ctx.ids, ctx.data, first, second)
if neither_stated:
    pair = pair.filter(~pl.col("metric").is_in([k for k in pair["metric"] if is_stated(k)]))
view, config = view_tables.comparison(pair, first, second, implied)
widgets.table(view, column_config=config)
st.caption(EXPLAIN)

st.subheader("Across all cohorts, adjusted for market difficulty")
pooled = queries.scores(ctx.url, None, ctx.data, "return_pct").filter(pl.col("agent").is_in([first, second]))
adjusted = (suffixed("brier_adjusted", implied), suffixed("brier_adjusted", other), "stated_brier_adjusted")
drawn, _ = shown_panels(pooled, adjusted)
if drawn:
    panels = [Panel(k, BY_KEY[k].axis_title(implied), BY_KEY[k].reference) for k in drawn]
    st.plotly_chart(paired_intervals(pooled.sort(pl.col("agent") != first), panels, styles))
st.caption(ADJUSTED)
for note in adjusted_notes(list(pooled.iter_rows(named=True))):
    st.caption(streamlit_literal(note))

st.subheader("Markets both bet on")
both = head_to_head(stances, first, second)
if both.is_empty():
    st.info("These two agents never bet on the same market.", icon=":material/info:")
else:
    decided = both.filter(pl.col("who_was_right").is_in([first, second, "both", "neither"]))
    tally = {
        name: int(decided["right_" + which].sum()) for name, which in ((first, "first"), (second, "second"))
    }
    st.caption(
        f"{len(both)} market(s) in common, {len(decided)} decided: "
        f"first agent right on {tally[first]}, second on {tally[second]}. "
        "Side: the outcome(s) bought; stake: dollars staked in all; stated P(YES): the last one stated."
    )
    questions = queries.markets(ctx.url, cohort_id, ctx.data).select("market_id", "question")
    view, config = view_tables.head_to_head(both, questions, first, second)
    widgets.table(view, column_config=config)
