"""Benchmark: the leaderboard page and a cohort report on 1,000,000 portfolio snapshot rows.

The database is the seeded world (``tests/dashboard/world.py``) whose replay cohort gets dense
intraday marks between its daily ones, 1,000,000 snapshot rows in all. It is built once, with
one bulk insert plus the day closes the mark writer keeps (``record_closes``), and cached under
the system temp folder (keyed by schema revision and the generator's version). Figures are
printed, never asserted on: run with ``make bench``.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from arena.clock import SimulatedClock
from arena.db.engine import make_engine, session_scope
from arena.db.migrate import head_revision, upgrade
from arena.db.models import PortfolioSnapshotRow
from arena.engine.marks import record_closes
from arena.reports.bundle import build_report
from tests.dashboard.world import REPLAY, build_world

pytestmark = pytest.mark.benchmark

ROWS = 1_000_000
GENERATOR = 1  # bump when the generated data changes
STEP_S = 11  # seconds between intraday marks
APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
COLUMNS = (
    "agent_id, cohort_id, marked_at, cash, positions_value, total_value, realized_pnl, unrealized_pnl, "
    "open_positions, stale_count"
)


def _micros(value: Decimal) -> int:
    """Dollars as stored on SQLite: an integer count of micro-dollars (``arena.db.types.Money``)."""
    return int(value.scaleb(6))


def _dense_marks(engine) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    """Marks every STEP_S seconds between each agent's daily marks: same cash and realised P/L
    (no fill happens between marks), the open positions' value wandering by a few dollars."""
    with engine.connect() as connection:
        daily = connection.execute(
            select(PortfolioSnapshotRow)
            .where(PortfolioSnapshotRow.cohort_id == REPLAY)
            .order_by(PortfolioSnapshotRow.agent_id, PortfolioSnapshotRow.marked_at)
        ).all()
    rng = random.Random(GENERATOR)
    per_agent = {}
    for row in daily:
        per_agent.setdefault(row.agent_id, []).append(row)
    needed = ROWS - len(daily)
    rows: list[tuple[object, ...]] = []
    agents = sorted(per_agent)
    quota = {a: needed // len(agents) + (1 if i < needed % len(agents) else 0) for i, a in enumerate(agents)}
    for agent in agents:
        marks, made = per_agent[agent], 0
        for mark in marks[:-1]:
            for k in range(1, 86_400 // STEP_S):
                if made == quota[agent]:
                    break
                noise = rng.randint(-500_000_000, 500_000_000) if mark.positions_value > 0 else 0
                at = (mark.marked_at + timedelta(seconds=k * STEP_S)).astimezone(UTC).replace(tzinfo=None)
                value = _micros(mark.positions_value) + noise
                cash, realized, unrealized = (
                    _micros(v) for v in (mark.cash, mark.realized_pnl, mark.unrealized_pnl)
                )
                rows.append((
                    agent, REPLAY, f"{at:%Y-%m-%d %H:%M:%S.%f}", cash, value, cash + value, realized,
                    unrealized + noise, mark.open_positions, mark.stale_count,
                ))  # fmt: skip
                made += 1
        assert made == quota[agent], "the cohort is too short for the requested marks"
    return rows


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
        rows = _dense_marks(engine)
        raw = engine.raw_connection()  # one transaction: the engine's connections autocommit otherwise
        try:
            cursor = raw.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            cursor.executemany(
                f"INSERT INTO portfolio_snapshot ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", rows
            )
            cursor.execute("COMMIT")  # foreign keys and checks stay on: every row is validated
        finally:
            raw.close()
        with session_scope(engine) as session:  # the day closes, as the mark writer keeps them
            record_closes(
                session,
                (
                    {
                        "agent_id": r[0],
                        "cohort_id": r[1],
                        "marked_at": datetime.fromisoformat(f"{r[2]}+00:00"),
                    }
                    for r in rows
                ),
            )
        with session_scope(engine, write=False) as session:  # bulk rows read back as the marks written
            newest = select(PortfolioSnapshotRow).order_by(PortfolioSnapshotRow.id.desc())  # type: ignore[union-attr]
            last = session.execute(newest).scalars().first()
            assert last is not None and f"{last.marked_at:%Y-%m-%d %H:%M:%S.%f}" == rows[-1][2]
            assert last.total_value == Decimal(rows[-1][5]).scaleb(-6) == last.cash + last.positions_value
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
    print(
        f"\nleaderboard page, {ROWS:,} snapshot rows: cold {timings[0]:.2f} s, warm {timings[1]:.2f} s, "
        f"new data {timings[2]:.2f} s"
        f"\nreport of that cohort: {report_s:.2f} s ({size:.1f} MB folder, {zipped:.1f} MB zip)"
    )
