"""Compare cohorts run on the same markets: each agent against the same agent of the reference
cohort, with paired intervals over their common markets and a verdict (as `arena compare`)."""

from __future__ import annotations

import streamlit as st

from arena.db.engine import make_engine
from arena.reports.cohort_comparison import (
    CohortComparison,
    ComparisonError,
    display_table,
    load_comparison,
)
from arena.reports.escaping import streamlit_literal
from arena.scoring import FrameError, LoadError
from dashboard import widgets
from dashboard.queries import TTL, Version

COHORTS, POOL = "compare_cohorts", "compare_cohorts_pool"
EXPLAIN = (
    "The first cohort is the reference (A). Each agent of another cohort is compared with the agent "
    "of the same name in A (or the same model, pooled by model): the difference is cohort − A on "
    "the markets **both** took part in, with a 95% bootstrap interval that resamples those markets "
    "(paired: each market's difference moves as one). A verdict needs at least {min} common "
    "resolved markets; below that, or when the interval holds 0, the data support no conclusion."
)
HEADERS = {
    "agent": "Agent",
    "cohort": "Cohort",
    "metric": "Metric",
    "reference": "A",
    "value": "Value",
    "difference": "Difference",
    "interval": "95% interval",
    "markets": "Common markets",
    "verdict": "Verdict",
}


@st.cache_data(ttl=TTL, max_entries=16, show_spinner="Comparing…")
def _comparison(url: str, ids: tuple[str, ...], data: Version, pool_by: str) -> CohortComparison:
    engine = make_engine(url)
    try:
        return load_comparison(engine, ids, pool_by="model" if pool_by == "model" else "name")
    finally:
        engine.dispose()


ctx = widgets.context()
st.title("Compare cohorts")
ids = ctx.cohorts["cohort_id"].to_list()  # newest first
if len(ids) < 2:
    widgets.stop_with("The database has one cohort: run another on the same markets to compare them.")
if COHORTS not in st.session_state:
    first = ctx.choice if ctx.choice in ids else ids[0]
    st.session_state[COHORTS] = [first, next(c for c in ids if c != first)]
chosen = st.multiselect("Cohorts (the first is the reference, A)", ids, key=COHORTS)
pool_by = st.radio(
    "Match agents by",
    ["name", "model"],
    key=POOL,
    horizontal=True,
    help="By display name, or by model identity (kind, endpoint, model, prompt).",
)
if len(chosen) < 2:
    widgets.stop_with("Pick at least two cohorts.")
try:
    comparison = _comparison(ctx.url, tuple(chosen), ctx.data, str(pool_by))
except (LoadError, FrameError, ComparisonError) as exc:
    st.error(streamlit_literal(str(exc)))
    st.stop()

for letter, cohort in zip(comparison.letters, comparison.cohorts, strict=True):
    st.markdown(f"**{letter}** · {streamlit_literal(cohort)}")
st.caption(
    f"{len(comparison.common_markets)} markets bet or stated on in every cohort. "
    + EXPLAIN.format(min=comparison.min_markets)
)
for cohort, unmatched in comparison.unmatched.items():
    if unmatched:
        names = streamlit_literal(", ".join(unmatched))
        st.caption(f"Not compared (no namesake): {names} of {streamlit_literal(cohort)}")
table = display_table(comparison)
if table.is_empty():
    widgets.stop_with("No agent sits in the reference cohort and another: nothing to compare.")
widgets.table(table.select(list(HEADERS)).rename(HEADERS))
st.subheader("Verdicts")
for (agent, letter), rows in table.group_by(["agent", "cohort"], maintain_order=True):
    st.markdown(f"**{streamlit_literal(str(agent))}** ({letter} vs A)")
    for reading in rows["reading"]:
        st.markdown(f"- {streamlit_literal(reading)}")
with st.expander("Common markets"):
    st.text("\n".join(comparison.common_markets))
