"""Pieces every page shares: the data context, the cohort picker, empty states and live refresh.

The sidebar (cohort picker, live indicator) is drawn once by ``dashboard/app.py`` before the
page runs, so its widget state survives page switches. A page asks ``context()`` for what it
may show; with nothing to show it says what to do (``st.info``) and stops, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from arena.reports import catalog
from arena.reports.escaping import streamlit_literal
from arena.scoring.load.cohort_choice import POOLED_STATUSES, cohort_line
from dashboard import queries

if TYPE_CHECKING:
    from arena.figures import AgentStyle

ALL = "__all__"
COHORT_KEY = "cohort"
REFRESH_SECONDS = 30
# A row height (px) at which table cells wrap their text (Streamlit wraps once a row is taller
# than 4 rem): five lines, for long texts that would otherwise run past the right edge.
WRAPPED_ROW = 100
DEMO_HINT = "Run `arena demo` to replay the bundled markets with the baseline bots, then reload this page."


@dataclass(frozen=True)
class Context:
    url: str
    data: queries.Version
    cohorts: pl.DataFrame
    choice: str  # a cohort id, or ALL

    @property
    def ids(self) -> queries.Cohorts:
        """The cohorts in view: the one chosen, or for ALL every cohort that ran (as ``--all``)."""
        return tuple(sorted(self.pooled["cohort_id"])) if self.choice == ALL else (self.choice,)

    @property
    def pooled(self) -> pl.DataFrame:
        """The cohorts "All cohorts" pools: those that ran, less any that cannot be scored."""
        poisoned = list(queries.unscorable_cohorts(self.url, self.data))
        return self.cohorts.filter(
            pl.col("status").is_in(POOLED_STATUSES) & ~pl.col("cohort_id").is_in(poisoned)
        )

    @property
    def cohort(self) -> dict[str, Any]:
        return self.cohorts.filter(pl.col("cohort_id") == self.choice).row(0, named=True)


def stop_with(message: str) -> None:
    """A helpful empty state: what is missing and what to run."""
    st.info(message, icon=":material/info:")
    st.stop()


def sidebar() -> Context | None:
    """Draw the sidebar: database problems, the cohort picker and the live indicator."""
    url = queries.database_url()
    state = queries.state(url)
    if not state.ready:
        st.sidebar.warning(state.problem)
        return None
    data = queries.version(url)
    table = queries.cohorts(url, data)
    if table.is_empty():
        return None
    names = _picker_names(table)
    default = _default_cohort(table)
    options = [*table["cohort_id"].to_list(), ALL]
    if st.session_state.get(COHORT_KEY) not in options:  # first visit: a shared link, else the default
        linked = st.query_params.get(COHORT_KEY)
        st.session_state[COHORT_KEY] = linked if linked in options else default
    choice = st.sidebar.selectbox(
        "Cohort",
        options,
        key=COHORT_KEY,
        format_func=lambda c: "All cohorts that ran (pooled)" if c == ALL else names[c],
        help="Leaderboard, calibration and markets can pool every cohort; the other pages show one.",
    )
    if choice != ALL:  # the full name and id, wrapped: the box above cuts what does not fit
        row = table.filter(pl.col("cohort_id") == choice).row(0, named=True)
        st.sidebar.caption(f"{streamlit_literal(row['name'])} · {streamlit_literal(row['cohort_id'])}")
    st.query_params[COHORT_KEY] = str(choice)  # the address bar always links to what is shown
    live = catalog.live_cohorts(table)
    if live:
        st.sidebar.success(f"Live: {len(live)} cohort(s) running; refreshing every {REFRESH_SECONDS} s.")
        _watch(url, data)
    return Context(url, data, table, str(choice))


def _picker_names(table: pl.DataFrame) -> dict[str, str]:
    """What the picker shows per cohort id: its name, with the id only where names repeat (the
    id is long and would push the name out of the sidebar)."""
    repeated = set(table.filter(pl.col("name").is_duplicated())["name"])
    return {
        c: f"{n} · {c}" if n in repeated else n
        for c, n in zip(table["cohort_id"], table["name"], strict=True)
    }


def _default_cohort(table: pl.DataFrame) -> str:
    """The latest cohort (``table`` is newest first), as ``arena leaderboard`` shows by default."""
    return str(table["cohort_id"][0])


@st.fragment(run_every=REFRESH_SECONDS)
def _watch(url: str, shown: queries.Version) -> None:
    """Rerun the whole app when new rows land (only drawn while a live cohort runs)."""
    if queries.version(url) != shown:
        st.rerun(scope="app")


def context() -> Context:
    """What the page may show; stops with an explanation if the database has nothing yet."""
    url = queries.database_url()
    state = queries.state(url)
    if not state.ready:
        stop_with(f"{state.problem}\n\n{DEMO_HINT}")
    data = queries.version(url)
    table = queries.cohorts(url, data)
    if table.is_empty():
        stop_with(f"The database has no cohorts yet. {DEMO_HINT}")
    choice = st.session_state.get(COHORT_KEY)
    if choice != ALL and choice not in table["cohort_id"].to_list():  # e.g. a cohort deleted meanwhile
        choice = _default_cohort(table)
    _unscorable(url, data, str(choice))
    return Context(url, data, table, str(choice))


def _unscorable(url: str, data: queries.Version, choice: str) -> None:
    """One line per cohort left out of "All cohorts" because it cannot be scored; a page of such
    a cohort says why and stops (its frozen config came from an older version, out of range)."""
    poisoned = queries.unscorable_cohorts(url, data)
    if choice in poisoned:
        st.error(f"Cohort {streamlit_literal(choice)} cannot be shown: {streamlit_literal(poisoned[choice])}")
        st.stop()
    if choice == ALL:
        for cohort_id, reason in poisoned.items():
            st.warning(f"Cohort {streamlit_literal(cohort_id)} is not scored: {streamlit_literal(reason)}")


def single_cohort(ctx: Context) -> str:
    """The chosen cohort id; pages about one cohort stop with a hint when "All cohorts" is chosen."""
    if ctx.choice == ALL:
        stop_with("This page shows one cohort at a time: pick one in the sidebar.")
    return ctx.choice


def styles(ctx: Context) -> dict[str, AgentStyle]:
    """Agent colours from the roster of the cohorts in view (the same on every page)."""
    from arena.figures import agent_styles  # plotly: only pages that draw import it

    if ctx.choice == ALL:
        return agent_styles(queries.frames(ctx.url, ctx.ids, ctx.data).agents)
    return agent_styles(queries.agents(ctx.url, ctx.choice, ctx.data))


def cohort_caption(ctx: Context) -> None:
    if ctx.choice == ALL:
        left = ctx.cohorts.filter(~pl.col("status").is_in(POOLED_STATUSES))
        line = cohort_line(
            {
                "cohorts": list(ctx.ids or ()),
                "cohort_selection": "all",
                "cohorts_left_out": [
                    {"cohort": c, "status": s} for c, s in zip(left["cohort_id"], left["status"], strict=True)
                ],
            }
        )
        st.caption(f"{streamlit_literal(line)} Money is summed per agent, bets pooled.")
        return
    c = ctx.cohort
    st.caption(
        f"Cohort **{streamlit_literal(c['name'])}** ({streamlit_literal(c['cohort_id'])}) · {c['mode']} · "
        f"{c['status']} · {c['agents']} agents"
    )


def signed_delta(value: float | Decimal | None, text: str) -> dict[str, Any]:
    """``st.metric`` keywords for a delta shown as ``text``, pointed and coloured by the sign of
    ``value``: a gain green and up, a loss red and down, zero grey without an arrow. Streamlit
    reads the sign off the text's first character, and a typographic minus (−$600.00) reads as
    a gain."""
    if value is None:
        return {"delta": None}
    if value > 0:
        return {"delta": text, "delta_color": "green", "delta_arrow": "up"}
    if value < 0:
        return {"delta": text, "delta_color": "red", "delta_arrow": "down"}
    return {"delta": text, "delta_color": "off", "delta_arrow": "off"}


def table(frame: pl.DataFrame, where: Any = st, **options: Any) -> None:
    """Show ``frame`` as a sortable table in ``where`` (the page, a tab, a column...).

    It goes to Streamlit as an Arrow table, sent whole (``lazy=False``), which Streamlit sends
    as is. Any other frame is converted through pandas, and Streamlit's lazy delivery imports
    pandas to inspect an Arrow table: pandas' import alone costs most of a second on a cold
    dashboard, and the dashboard's tables are small enough to send whole.
    """
    where.dataframe(frame.to_arrow(), hide_index=True, placeholder="—", lazy=False, **options)
