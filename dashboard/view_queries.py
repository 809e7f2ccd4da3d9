"""Cached reads of the comparison pages (Compare, Per market, Cost vs score).

Same contract as ``dashboard.queries`` (database URL and ``data_version`` in every key, widgets
never read here, texts through the reports' redactor). Every figure comes from ``arena.scoring``
on the frames ``queries.frames`` already holds, so these pages agree with the leaderboard to the
last digit.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from arena.scoring.board.pairs import market_stances, paired_comparison
from arena.scoring.metrics.value_for_money import cost_per_point
from dashboard import queries
from dashboard.queries import TTL, Cohorts, Version


@st.cache_data(ttl=TTL, max_entries=32, show_spinner="Comparing…")
def pair(url: str, ids: Cohorts, data: Version, first: str, second: str) -> pl.DataFrame:
    """The paired comparison of two agents, with the cohorts' bootstrap seed (first − second)."""
    seed = queries.scoring_choice(url, ids, data).seed
    return paired_comparison(queries.frames(url, ids, data), first, second, seed=seed)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def stances(url: str, ids: Cohorts, data: Version) -> pl.DataFrame:
    """Per agent and market it bet on: side, stake, last stated P(YES), outcome, right, P/L."""
    return market_stances(queries.frames(url, ids, data))


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def value_for_money(url: str, ids: Cohorts, data: Version) -> pl.DataFrame:
    """Dollars per Brier point and per 1% of return of the agents that recorded model usage."""
    implied = queries.scoring_choice(url, ids, data).implied
    return cost_per_point(queries.scores(url, ids, data, "return_pct"), implied)
