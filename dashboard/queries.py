"""The dashboard's data: cached, read-only queries that return polars frames.

Every cached function takes the database URL and the current ``data_version`` (a cheap
fingerprint of the stored log, see ``arena.reports.catalog.data_version``) as arguments, so a
cached answer is reused for as long as nothing new was stored and recomputed as soon as
something was: a finished cohort is read once, a live one whenever a round, fill or mark lands.
The TTL and ``max_entries`` only bound memory. Widgets are never read in here: their values
come in as arguments.

Reads go through ``arena.reports`` (the cohort log, the database's state) and ``arena.scoring``
(every score); the dashboard computes nothing itself. Decision texts pass the same redactor as reports.
"""

from __future__ import annotations

import os
from datetime import timedelta

import polars as pl
import streamlit as st
from sqlalchemy import Engine
from sqlalchemy.engine import Connection

from arena.core.settings import Settings
from arena.db.engine import make_engine
from arena.reports import catalog, log_tables
from arena.reports.redact import Redactor
from arena.reports.series import thin_marks
from arena.reports.state import DatabaseState, database_state
from arena.scoring import ScoringFrames, calibration_summary, calibration_table, leaderboard, load_frames
from arena.scoring.board.tables import SOURCES
from arena.scoring.load.database import CohortScoring, cohort_scoring, unscorable
from arena.scoring.rules.bets import scored_bets
from dashboard import warmup

TTL = timedelta(minutes=10)  # a string would make Streamlit import pandas to parse it
Cohorts = tuple[str, ...] | None  # None: every cohort
Version = tuple[object, ...]


def database_url() -> str:
    """``ARENA_DATABASE_URL`` (set by ``arena dashboard``), else the local SQLite file."""
    return Settings().db_url


@st.cache_resource(max_entries=4)
def _engine(url: str) -> Engine:
    return make_engine(url)


def _read(url: str) -> Connection:
    """A connection for one read; SQLite readers never take the write lock (WAL)."""
    return _engine(url).connect()


@st.cache_data(ttl=15, max_entries=4, show_spinner=False)
def state(url: str) -> DatabaseState:
    return database_state(url)


def version(url: str) -> Version:
    """Not cached: this is what tells the caches below that the data moved."""
    with _read(url) as connection:
        return catalog.data_version(connection)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def cohorts(url: str, data: Version) -> pl.DataFrame:
    with _read(url) as connection:
        return catalog.cohorts(connection)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def unscorable_cohorts(url: str, data: Version) -> dict[str, str]:
    """Cohorts this version cannot score (frozen by an older one with values now out of range)."""
    with _read(url) as connection:
        return unscorable(connection)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def cohort_config(url: str, cohort_id: str, data: Version) -> dict[str, object]:
    with _read(url) as connection:
        config = catalog.cohort_config(connection, cohort_id)
    return dict(Redactor.from_environ(os.environ).document(config))


@st.cache_resource(ttl=TTL, max_entries=4, show_spinner="Loading the cohort log…")
def frames(url: str, ids: Cohorts, data: Version) -> ScoringFrames:
    """Scoring frames (immutable, so shared across sessions without copying)."""
    warm = warmup.take("frames", url, ids, data)
    if warm is not None:
        return warm  # type: ignore[no-any-return]
    with _read(url) as connection:
        return load_frames(connection, None if ids is None else list(ids))


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def scoring_choice(url: str, ids: Cohorts, data: Version) -> CohortScoring:
    """The cohorts' bootstrap seed and headline reading (the same as the CLI's and the report's)."""
    with _read(url) as connection:
        return cohort_scoring(connection, None if ids is None else list(ids))


@st.cache_data(ttl=TTL, max_entries=32, show_spinner="Scoring…")
def scores(url: str, ids: Cohorts, data: Version, by: str) -> pl.DataFrame:
    warm = warmup.take("scores", url, ids, data, by)
    if warm is not None:
        return warm  # type: ignore[no-any-return]
    return leaderboard(frames(url, ids, data), by=by, seed=scoring_choice(url, ids, data).seed)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def calibration(url: str, ids: Cohorts, data: Version) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Reliability bins and Murphy summaries of implied and stated forecasts (column ``source``)."""
    scored = frames(url, ids, data)
    tables = [calibration_table(scored, s).with_columns(source=pl.lit(s)) for s in SOURCES]
    summaries = [calibration_summary(scored, s).with_columns(source=pl.lit(s)) for s in SOURCES]
    return pl.concat(tables), pl.concat(summaries)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def bets(url: str, ids: Cohorts, data: Version) -> pl.DataFrame:
    """Every bet with its implied forecast of YES and, once resolved, its score."""
    return scored_bets(frames(url, ids, data))


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def stated(url: str, ids: Cohorts, data: Version) -> pl.DataFrame:
    return frames(url, ids, data).forecasts


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def agents(url: str, cohort_id: str, data: Version) -> pl.DataFrame:
    with _read(url) as connection:
        return log_tables.agents(connection, cohort_id)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def equity(url: str, cohort_id: str, data: Version) -> pl.DataFrame:
    """The cohort's marks, thinned to what a chart can show (first and latest marks kept)."""
    with _read(url) as connection:
        return thin_marks(log_tables.portfolio_snapshots(connection, cohort_id))


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def rounds(url: str, cohort_id: str, data: Version) -> pl.DataFrame:
    with _read(url) as connection:
        return log_tables.rounds(connection, cohort_id)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def decisions(url: str, cohort_id: str, data: Version, agent: str | None = None) -> pl.DataFrame:
    """Decisions (with raw prompt and response for one agent), secrets redacted."""
    with _read(url) as connection:
        table = log_tables.decisions(connection, cohort_id, prompts=agent is not None, agent=agent)
    return Redactor.from_environ(os.environ).frame(table)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def tool_calls(url: str, cohort_id: str, data: Version, agent: str) -> pl.DataFrame:
    """One agent's research-tool calls, secrets redacted."""
    with _read(url) as connection:
        table = log_tables.tool_calls(connection, cohort_id, agent=agent)
    return Redactor.from_environ(os.environ).frame(table)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def positions(url: str, cohort_id: str, data: Version) -> pl.DataFrame:
    """Every position, with the shares, cost and proceeds of the fill that closed it (if any)."""
    with _read(url) as connection:
        held = log_tables.positions(connection, cohort_id)
        closes = log_tables.position_closes(connection, cohort_id)
    return held.join(closes, on=["agent", "position_id"], how="left")


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def fills(url: str, cohort_id: str, data: Version) -> pl.DataFrame:
    with _read(url) as connection:
        return log_tables.fills(connection, cohort_id)


@st.cache_data(ttl=TTL, max_entries=16, show_spinner=False)
def markets(url: str, cohort_id: str | None, data: Version) -> pl.DataFrame:
    with _read(url) as connection:
        return catalog.markets(connection, cohort_id)


@st.cache_data(ttl=TTL, max_entries=32, show_spinner=False)
def market_description(url: str, market_id: str, data: Version) -> str:
    """The market's description as its venue wrote it ("" when it has none), secrets redacted."""
    with _read(url) as connection:
        return Redactor.from_environ(os.environ).text(catalog.market_description(connection, market_id))


@st.cache_data(ttl=TTL, max_entries=32, show_spinner=False)
def price_history(url: str, market_id: str, data: Version) -> pl.DataFrame:
    with _read(url) as connection:
        return catalog.price_history(connection, market_id)
