"""``arena db prune``: old job runs, finished units, processes and the prices of markets nobody
offered or held go; every leaderboard and report stays byte for byte the same.

The database holds a live cohort run for real through ``arena serve``'s job bodies (two rounds,
a bet, marks, a settlement, completion) beside what a deployment piles up: months of job runs,
prices of markets no cohort offered (closed long ago, or still open), finished units, stopped
processes. The leaderboard (``--json``) and the report (every file, with the clock fixed) are
built before and after the prune and compared as bytes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine, func
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from arena.cli import app
from arena.core.clock import SimulatedClock
from arena.db.engine import session_scope
from arena.db.models import JobRunRow, MarketSnapshotRow, ServeProcessRow, WorkerRow, WorkUnitRow
from arena.engine.live.jobs import completion_job, marks_job, rounds_job, settlement_job
from arena.reports.bundle import build_report
from arena.scheduling.retention import Retention, prunable, prune
from arena.workers import queue, roster
from markets.types import ResolutionKind
from tests.engine.live_world import launch_live, resolve, scripted_bets, store_market

T0 = datetime(2026, 3, 2, tzinfo=UTC)
NOW = T0 + timedelta(days=120)
OFFERED, OPEN_ELSEWHERE, CLOSED_LONG_AGO = "polymarket:off", "polymarket:open", "polymarket:gone"


def _hourly(start: datetime, hours: int, price: str) -> list[tuple[datetime, str]]:
    return [(start + timedelta(hours=h), price) for h in range(hours)]


def _live_cohort(engine: Engine, tmp_path: Path) -> str:
    alice = scripted_bets(tmp_path / "bets.jsonl", (T0, OFFERED, 400))
    cohort = launch_live(
        engine, T0, [alice, {"name": "h", "kind": "hold"}], name="kept", marks={"every": "1h"}
    )
    clock = SimulatedClock(T0)
    for at in (T0 + timedelta(minutes=1), T0 + timedelta(hours=5), T0 + timedelta(days=1, minutes=1)):
        clock.set(at)
        rounds_job(engine, clock, environ={})
        marks_job(engine, clock, environ={})
    resolve(engine, OFFERED, ResolutionKind.YES, T0 + timedelta(days=2))
    clock.set(T0 + timedelta(days=2, hours=1))
    settlement_job(engine, clock, environ={})
    assert completion_job(engine, clock, environ={}) == "1 cohorts completed"
    return cohort


def _deployment_history(engine: Engine) -> None:
    """What months of `arena serve` and workers leave behind, beside the cohort."""
    with session_scope(engine) as session:
        for day in range(100):
            started = T0 + timedelta(days=day)
            session.add(
                JobRunRow(job="sync", bucket=started, started_at=started, finished_at=started, ok=True)
            )
        session.add(JobRunRow(job="settle", bucket=T0, started_at=T0, finished_at=T0, ok=True))  # its last
        session.add(JobRunRow(job="replay", scope="c", started_at=T0, finished_at=T0, ok=True))  # audit: kept
    roster.join(engine, "w-old", "h", 1, T0, timedelta(seconds=30))
    roster.leave(engine, "w-old", T0 + timedelta(hours=1))
    roster.join(engine, "w-new", "h", 2, NOW - timedelta(seconds=5), timedelta(seconds=30))
    with session_scope(engine) as session:
        session.add(
            ServeProcessRow(owner="s-old", host="h", pid=3, started_at=T0, heartbeat_at=T0, lease_seconds=60)
        )
    if engine.dialect.name == "postgresql":  # the queue needs PostgreSQL
        for key in ("polymarket", "manifold"):
            queue.enqueue(engine, queue.SYNC, key, T0)
            lease = queue.take(engine, "w", T0, timedelta(seconds=30))
            assert lease is not None
            queue.finish(engine, lease, T0 + timedelta(seconds=1))
        queue.enqueue(engine, queue.SYNC, "polymarket", NOW)  # queued now: kept


def _leaderboard(engine: Engine, cohort: str) -> str:
    env = {"ARENA_DATABASE_URL": engine.url.render_as_string(hide_password=False)}
    result = CliRunner().invoke(app, ["leaderboard", "--cohort", cohort, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


def _report(engine: Engine, cohort: str, out: Path) -> dict[str, bytes]:
    build_report(engine, cohort, out, clock=SimulatedClock(NOW), environ={})
    files = sorted(p for p in [*out.rglob("*"), out.with_name(f"{out.name}.zip")] if p.is_file())
    return {str(p.relative_to(out.parent)): p.read_bytes() for p in files}


def _count(engine: Engine, model: type, *where: object) -> int:
    with Session(engine) as session:
        return int(session.exec(select(func.count()).select_from(model).where(*where)).one())  # type: ignore[call-overload]


def test_a_prune_keeps_every_leaderboard_and_report_byte_for_byte(engine: Engine, tmp_path: Path) -> None:
    store_market(
        engine,
        OFFERED,
        T0 + timedelta(days=30),
        [(T0 - timedelta(minutes=30), "0.40"), (T0 + timedelta(hours=4), "0.50")],
    )
    store_market(
        engine, CLOSED_LONG_AGO, T0 - timedelta(days=10), _hourly(T0 - timedelta(days=20), 48, "0.30")
    )
    store_market(
        engine, OPEN_ELSEWHERE, NOW + timedelta(days=60), _hourly(T0 - timedelta(days=20), 48, "0.995")
    )
    cohort = _live_cohort(engine, tmp_path)
    _deployment_history(engine)
    offered_prices = _count(engine, MarketSnapshotRow, MarketSnapshotRow.market_id == OFFERED)
    board, report = _leaderboard(engine, cohort), _report(engine, cohort, tmp_path / "before" / "report")

    keep = Retention()
    planned = prunable(engine, NOW, keep)
    postgres = engine.dialect.name == "postgresql"
    assert planned == {
        "job_run": 90,  # sync runs older than 30 days; settle's only run is its last, kept
        "work_unit": 2 if postgres else 0,
        "market_snapshot": 47,  # the closed, never-offered market's prices but its last
        "serve_process": 1,
        "worker": 1,
    }
    assert prunable(engine, NOW, keep) == planned  # counting deleted nothing
    assert prune(engine, NOW, keep) == planned
    assert prunable(engine, NOW, keep) == dict.fromkeys(planned, 0)

    assert _leaderboard(engine, cohort) == board
    assert _report(engine, cohort, tmp_path / "after" / "report") == report
    assert _count(engine, MarketSnapshotRow, MarketSnapshotRow.market_id == OFFERED) == offered_prices
    assert (
        _count(engine, MarketSnapshotRow, MarketSnapshotRow.market_id == OPEN_ELSEWHERE) == 48
    )  # still open
    assert _count(engine, MarketSnapshotRow, MarketSnapshotRow.market_id == CLOSED_LONG_AGO) == 1
    assert _count(engine, JobRunRow, col(JobRunRow.job).in_(("replay", "settle"))) == 2
    assert _count(engine, WorkerRow) == 1 and _count(engine, ServeProcessRow) == 0
    if postgres:
        assert _count(engine, WorkUnitRow, col(WorkUnitRow.state) == "queued") == 1


def test_prune_dry_run_prints_by_table_and_deletes_nothing(engine: Engine) -> None:
    _deployment_history(engine)
    env = {"ARENA_DATABASE_URL": engine.url.render_as_string(hide_password=False)}
    before = _count(engine, JobRunRow)
    dry = CliRunner().invoke(app, ["db", "prune", "--dry-run", "--job-runs", "40d"], env=env)
    assert dry.exit_code == 0, dry.output
    assert "job_run: would delete" in dry.output and "market_snapshot: would delete 0 row(s)" in dry.output
    assert "Nothing deleted (--dry-run)" in dry.output and _count(engine, JobRunRow) == before
    done = CliRunner().invoke(app, ["db", "prune", "--job-runs", "40d"], env=env)
    assert done.exit_code == 0 and "job_run: deleted" in done.output
    assert _count(engine, JobRunRow) < before
    bad = CliRunner().invoke(app, ["db", "prune", "--units", "soon"], env=env)
    assert bad.exit_code == 2 and bad.output.strip().splitlines() == [
        "error: --units: expected a positive duration like '7d', '12h', '30m' or '90s', got 'soon'"
    ]
