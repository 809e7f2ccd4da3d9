"""Benchmark: the leaderboard page and a cohort report on 1,000,000 portfolio snapshot rows.

The database is the seeded world (``tests/dashboard/world.py``) whose replay cohort gets dense
intraday marks between its daily ones, 1,000,000 snapshot rows in all. It is built once, in
bulk SQL (one ``INSERT ... SELECT`` for the marks, one for the day closes the mark writer keeps),
and cached under the system temp folder (keyed by schema revision and the generator's version). Figures are
printed, never asserted on: run with ``make bench``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import Engine, func, select, text
from streamlit.testing.v1 import AppTest

from arena.core.clock import SimulatedClock
from arena.db.engine import make_engine, session_scope
from arena.db.migrate import head_revision, upgrade
from arena.db.models import PortfolioCloseRow, PortfolioSnapshotRow
from arena.reports.bundle import build_report
from tests.benchmarks.results import Figure, record
from tests.dashboard.world import REPLAY, build_world

pytestmark = pytest.mark.benchmark

ROWS = 1_000_000
GENERATOR = 2  # bump when the generated data changes
STEP_S = 11  # seconds between intraday marks
APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
COLUMNS = (
    "agent_id, cohort_id, marked_at, cash, positions_value, total_value, realized_pnl, unrealized_pnl, "
    "open_positions, stale_count"
)


STEPS_PER_DAY = 86_400 // STEP_S - 1  # intraday marks between two daily ones
# Every intraday mark in one INSERT ... SELECT: the k-th extra mark of an agent (k from 0) falls
# STEP_S·(k mod STEPS_PER_DAY + 1) seconds after its (k div STEPS_PER_DAY)-th daily mark, with its
# cash and realised P/L, and the open positions' value wandering by up to $500 (a fixed hash of k
# and the agent, so the data is the same on every build). Money is in micro-dollars, as stored.
DENSE_MARKS = f"""
WITH RECURSIVE step(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM step WHERE k + 1 < :most),
daily AS (
    SELECT *, row_number() OVER (PARTITION BY agent_id ORDER BY marked_at) - 1 AS day_index
    FROM portfolio_snapshot WHERE cohort_id = :cohort
),
quota AS (
    SELECT agent_id, :each + (row_number() OVER (ORDER BY agent_id) <= :extra) AS marks
    FROM (SELECT DISTINCT agent_id FROM daily)
),
dense AS (
    SELECT d.*, s.k,
        CASE WHEN d.positions_value > 0
            THEN (s.k * 2654435761 + d.agent_id * 40503) % 1000000001 - 500000000 ELSE 0 END AS noise
    FROM quota q
    JOIN step s ON s.k < q.marks
    JOIN daily d ON d.agent_id = q.agent_id AND d.day_index = s.k / {STEPS_PER_DAY}
)
INSERT INTO portfolio_snapshot ({COLUMNS})
SELECT agent_id, cohort_id,
    strftime('%Y-%m-%d %H:%M:%S', marked_at, '+' || ((k % {STEPS_PER_DAY} + 1) * {STEP_S}) || ' seconds')
        || '.000000',
    cash, positions_value + noise, cash + positions_value + noise, realized_pnl, unrealized_pnl + noise,
    open_positions, stale_count
FROM dense
"""
# The day closes the mark writer keeps (``record_closes``): each agent's last mark of a UTC day.
DAY_CLOSES = """
INSERT INTO portfolio_close (agent_id, day, cohort_id, closed_at)
SELECT agent_id, substr(marked_at, 1, 10), cohort_id, max(marked_at) FROM portfolio_snapshot
WHERE cohort_id = :cohort GROUP BY agent_id, cohort_id, substr(marked_at, 1, 10)
ON CONFLICT (agent_id, day) DO UPDATE SET closed_at = excluded.closed_at
WHERE excluded.closed_at > portfolio_close.closed_at
"""


def _add_dense_marks(engine: Engine) -> None:
    """Marks every STEP_S seconds between each agent's daily marks up to ROWS in all, and their
    day closes, in one transaction of two statements (foreign keys and checks stay on)."""
    with engine.begin() as connection:
        agents, daily = connection.execute(
            text("SELECT count(DISTINCT agent_id), count(*) FROM portfolio_snapshot WHERE cohort_id = :c"),
            {"c": REPLAY},
        ).one()  # (the driver reports no row count for a WITH statement: counted again after)
        needed = ROWS - daily
        each, extra = divmod(needed, agents)
        assert each + 1 < (daily // agents - 1) * STEPS_PER_DAY, "the cohort is too short for the marks"
        params = {"cohort": REPLAY, "most": each + 1, "each": each, "extra": extra}
        connection.execute(text(DENSE_MARKS), params)
        count = text("SELECT count(*) FROM portfolio_snapshot WHERE cohort_id = :c")
        assert connection.execute(count, {"c": REPLAY}).scalar() == ROWS
        connection.execute(text(DAY_CLOSES), {"cohort": REPLAY})


@pytest.fixture(scope="module")
def million() -> str:
    """The cached benchmark database (SQLite; money in micro-units as ``arena.db.types`` stores it)."""
    cache = (
        Path(tempfile.gettempdir()) / "arena-bench" / f"dashboard-{ROWS}-g{GENERATOR}-{head_revision()}.db"
    )
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        url = f"sqlite:///{partial}"
        upgrade(url)
        engine = make_engine(url)
        started = time.perf_counter()
        build_world(engine)
        _add_dense_marks(engine)
        with session_scope(engine, write=False) as session:  # bulk rows read back as the marks written
            newest = select(PortfolioSnapshotRow).order_by(PortfolioSnapshotRow.id.desc()).limit(1)  # type: ignore[union-attr]
            last = session.execute(newest).scalars().first()
            assert last is not None and last.total_value == last.cash + last.positions_value
            closes = select(PortfolioCloseRow.agent_id, func.max(PortfolioCloseRow.closed_at)).group_by(
                PortfolioCloseRow.agent_id
            )
            marks = select(PortfolioSnapshotRow.agent_id, func.max(PortfolioSnapshotRow.marked_at)).group_by(
                PortfolioSnapshotRow.agent_id
            )
            assert dict(session.execute(closes).all()) == dict(session.execute(marks).all())  # days closed
        engine.dispose()
        shutil.move(partial, cache)
        print(f"\nbuilt {cache} in {time.perf_counter() - started:.1f} s")
    return f"sqlite:///{cache}"


def test_leaderboard_and_report_on_a_million_marks(
    million: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(million)
    in_cohort = PortfolioSnapshotRow.cohort_id == REPLAY
    with engine.connect() as connection:
        assert (
            connection.execute(
                select(func.count()).select_from(PortfolioSnapshotRow).where(in_cohort)
            ).scalar()
            == ROWS
        )

    monkeypatch.setenv("ARENA_DATABASE_URL", million)
    st.cache_data.clear()
    st.cache_resource.clear()
    timings = []
    # cold: a fresh process (imports, Streamlit's start-up); warm: views cached; new data: the
    # process warm but the caches emptied, as after new marks arrive in a live cohort
    for run in ("cold", "warm", "new data"):
        if run == "new data":
            st.cache_data.clear()
            st.cache_resource.clear()
        app = AppTest.from_file(str(APP), default_timeout=600)
        app.session_state["cohort"] = REPLAY
        started = time.perf_counter()
        app.run()
        timings.append(time.perf_counter() - started)
        assert [e.value for e in app.exception] == [] and len(app.dataframe[0].value) == 5

    started = time.perf_counter()
    report = build_report(
        engine,
        REPLAY,
        tmp_path / "report",
        clock=SimulatedClock(datetime(2025, 3, 1, tzinfo=UTC)),
        environ=os.environ,
    )
    report_s = time.perf_counter() - started
    assert report.rows["portfolio_snapshots"] == ROWS
    engine.dispose()
    size = sum(p.stat().st_size for p in report.folder.rglob("*") if p.is_file()) / 1e6
    zipped = report.zip.stat().st_size / 1e6 if report.zip else 0.0
    cold, warm, new = timings
    record(
        "dashboard",
        measures=f"the dashboard's leaderboard page and `arena report` on {ROWS:,} portfolio marks",
        command="pytest tests/benchmarks/test_bench_dashboard.py -s -m benchmark",
        figures=[
            Figure("leaderboard page, fresh process", cold, "s", target="< 2 s", met=cold < 2),
            Figure("leaderboard page, new data", new, "s"),
            Figure("leaderboard page, cached", warm, "s"),
            Figure(
                f"report ({size:.0f} MB folder, {zipped:.0f} MB zip)",
                report_s,
                "s",
                target="< 30 s",
                met=report_s < 30,
            ),
        ],
    )
