"""The live scheduler: leader lease, once-per-period job claims, status, and a real ``arena serve``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, inspect, text
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.core.clock import SimulatedClock
from arena.core.settings import Settings
from arena.db import leases
from arena.db.models import JobRunRow
from arena.scheduling.jobs import job_specs
from arena.scheduling.runs import JobFailed, JobSpec, bucket_of, run_once
from arena.scheduling.status import job_statuses

T0 = datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC)
TTL = timedelta(seconds=60)


def _url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def test_lease_elects_one_leader_and_fails_over_when_it_expires(engine: Engine) -> None:
    assert leases.try_acquire(engine, "a", T0, TTL)
    assert not leases.try_acquire(engine, "b", T0 + timedelta(seconds=1), TTL)
    assert leases.try_acquire(engine, "a", T0 + timedelta(seconds=30), TTL)  # renewal
    late = T0 + timedelta(seconds=30) + TTL + timedelta(seconds=1)
    assert leases.try_acquire(engine, "b", late, TTL)  # a died: b takes over
    assert not leases.try_acquire(engine, "a", late, TTL)
    leases.release(engine, "b")
    assert leases.try_acquire(engine, "a", late, TTL)  # a clean release frees it at once
    held = leases.holder(engine)
    assert held is not None and held.owner == "a"


def test_a_job_runs_once_per_period(engine: Engine) -> None:
    runs: list[datetime] = []
    clock = SimulatedClock(T0)
    spec = JobSpec("marks", timedelta(minutes=10), lambda _e, c: runs.append(c.now()) or "marked 3", "test")
    assert run_once(spec, engine, clock)
    assert not run_once(spec, engine, clock)  # same period: skipped
    clock.advance(timedelta(minutes=10))
    assert run_once(spec, engine, clock)
    assert runs == [T0, T0 + timedelta(minutes=10)]
    with Session(engine) as session:
        rows = session.exec(select(JobRunRow).order_by(JobRunRow.bucket)).all()  # type: ignore[arg-type]
    assert [(r.bucket, r.ok, r.message) for r in rows] == [
        (bucket_of(T0, timedelta(minutes=10)), True, "marked 3"),
        (bucket_of(T0 + timedelta(minutes=10), timedelta(minutes=10)), True, "marked 3"),
    ]


def test_a_failed_job_is_recorded_reported_and_raised(engine: Engine) -> None:
    def broken(_engine: Engine, _clock: SimulatedClock) -> str:
        raise ValueError("every agent of round 3 failed")

    spec = JobSpec("rounds", timedelta(minutes=1), broken, "test")
    with pytest.raises(JobFailed, match="every agent of round 3 failed"):
        run_once(spec, engine, SimulatedClock(T0))
    status = {s.name: s for s in job_statuses(engine, T0)}
    assert status["rounds"].last_ok is False
    assert status["rounds"].failures_24h == 1
    assert "every agent of round 3 failed" in status["rounds"].last_message
    assert status["marks"].last_started is None


_RACER = textwrap.dedent(
    """
    import os, sys, time
    from datetime import datetime, timedelta, UTC
    from arena.core.clock import SimulatedClock
    from arena.db.engine import make_engine
    from arena.scheduling.runs import JobSpec, run_once

    url, log, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    def body(engine, clock):
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\\n")
        time.sleep(0.5)
        return "ran"
    engine = make_engine(url)
    while time.time() < start:
        time.sleep(0.005)
    spec = JobSpec("settle", timedelta(minutes=10), body, "race")
    run_once(spec, engine, SimulatedClock(datetime(2026, 3, 1, tzinfo=UTC)))
    """
)


def test_two_processes_firing_the_same_job_execute_it_once(engine: Engine, tmp_path: Path) -> None:
    script, log = tmp_path / "racer.py", tmp_path / "executions.log"
    script.write_text(_RACER)
    start = time.time() + 1.5
    procs = [
        subprocess.Popen([sys.executable, str(script), _url(engine), str(log), str(start)]) for _ in range(3)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    assert len(log.read_text().splitlines()) == 1


def _wait_for(predicate, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _stored_jobs(engine: Engine) -> set[str]:
    """Ids in APScheduler's job store; empty until serve has created it."""
    if not inspect(engine).has_table("apscheduler_jobs"):
        return set()
    with engine.connect() as conn:
        return {row[0] for row in conn.execute(text("SELECT id FROM apscheduler_jobs"))}


def _serve(url: str, *, option_home: Path | None = None) -> subprocess.Popen[bytes]:
    """``arena serve`` on ``url`` from the environment, or with ``option_home`` as ``--database-url``
    (and ``ARENA_HOME`` there, so a job that ignored the option would write a database of its own)."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DATABASE_URL"}
    option = [] if option_home is None else ["--database-url", url]
    if option_home is None:
        env["ARENA_DATABASE_URL"] = url
    else:
        env["ARENA_HOME"] = str(option_home)
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--poll", "0.3", *option],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_second_serve_stands_by_and_takes_over_after_ctrl_c(engine: Engine) -> None:
    first = _serve(_url(engine))
    second = None
    try:
        assert _wait_for(lambda: leases.holder(engine) is not None), "first serve never took the lease"
        leader = leases.holder(engine)
        assert leader is not None
        # The job store's table exists before all the jobs are in it: wait for the whole set.
        assert _wait_for(lambda: _stored_jobs(engine) == set(job_specs(Settings()))), _stored_jobs(engine)
        second = _serve(_url(engine))
        time.sleep(2.0)
        standby = leases.holder(engine)
        assert standby is not None and standby.owner == leader.owner  # second did not take over
        first.send_signal(signal.SIGINT)
        assert first.wait(timeout=30) == 0, first.stdout.read().decode() if first.stdout else ""
        assert _wait_for(lambda: (h := leases.holder(engine)) is not None and h.owner != leader.owner)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=30)
    assert second is not None and second.returncode == 0


def test_status_lists_jobs_and_exits_non_zero_after_a_failure(engine: Engine) -> None:
    env = {"ARENA_DATABASE_URL": _url(engine)}
    result = CliRunner().invoke(app, ["status"], env=env)
    assert result.exit_code == 0, result.output
    assert "not running" in result.output
    for name in job_specs(Settings()):
        assert name in result.output

    def broken(_engine: Engine, _clock: SimulatedClock) -> str:
        raise RuntimeError("venue unreachable")

    with pytest.raises(JobFailed):
        run_once(JobSpec("sync", timedelta(minutes=15), broken, "t"), engine, SimulatedClock(T0))
    result = CliRunner().invoke(app, ["status"], env=env)
    assert result.exit_code == 1
    assert "failed" in result.output


def test_cadences_and_misfire_grace_are_process_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_SYNC_EVERY", "30m")
    monkeypatch.setenv("ARENA_MISFIRE_GRACE", "90s")
    settings = Settings()
    specs = job_specs(settings)
    assert specs["sync"].every == timedelta(minutes=30)
    assert specs["marks"].every == timedelta(minutes=1)  # polls: cohorts mark on their marks.every
    assert settings.misfire_grace == timedelta(seconds=90)
    monkeypatch.setenv("ARENA_SYNC_EVERY", "soon")
    with pytest.raises(ValueError, match="expected a positive duration"):
        Settings()


def _ran(engine: Engine) -> set[str]:
    with Session(engine) as session:
        return {row.job for row in session.exec(select(JobRunRow)).all() if row.finished_at is not None}


@pytest.mark.parametrize("as_option", [False, True], ids=["env", "option"])
def test_serve_runs_every_job_at_start_up(engine: Engine, as_option: bool, tmp_path: Path) -> None:
    """Sync (every 15 minutes) and marks run within seconds of a leader starting, not one
    cadence later, in the database ``--database-url`` names when given (the jobs too)."""
    proc = _serve(_url(engine), option_home=tmp_path / "home" if as_option else None)
    try:
        assert _wait_for(lambda: {"sync", "marks", "settle", "complete"} <= _ran(engine)), _ran(engine)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_a_bad_cadence_setting_is_a_one_line_error(engine: Engine) -> None:
    env = {"ARENA_DATABASE_URL": _url(engine), "ARENA_MARKS_EVERY": "often"}
    result = CliRunner().invoke(app, ["status"], env=env)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: ARENA_MARKS_EVERY: expected a positive duration like '7d', '12h', '30m' or '90s', got 'often'"
    ]


def test_the_leader_lease_is_a_setting_and_serve_polls_well_within_it(engine: Engine) -> None:
    env = {"ARENA_DATABASE_URL": _url(engine), "ARENA_LEADER_LEASE": "3s"}
    assert Settings(leader_lease="3s").leader_lease == timedelta(seconds=3)  # type: ignore[arg-type]
    result = CliRunner().invoke(app, ["serve", "--poll", "2"], env=env)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: --poll 2: must be positive and at most a third of ARENA_LEADER_LEASE (3 s)"
    ]
    assert leases.holder(engine) is None  # refused before touching the lease
