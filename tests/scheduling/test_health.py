"""``arena status`` as a probe: its problems, its exit codes, its JSON, on both backends.

Each problem kind is made to happen for real (a live cohort without a scheduler, a sync whose
venue listing answers 503, a worker silent past its lease, a round nobody runs, a position in a
market closed long ago) and must show in the JSON with its reason and make the exit code 1;
cadences and standbys come from what the serving processes recorded, not from the caller.
"""

from __future__ import annotations

import json
import logging
import signal
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import select
from typer.testing import CliRunner

from arena.cli import app
from arena.core.clock import SimulatedClock
from arena.core.settings import Settings
from arena.core.summary import Summary
from arena.db import leases
from arena.db.engine import session_scope
from arena.db.models import AgentRow, PositionRow
from arena.scheduling import presence
from arena.scheduling.health import check
from arena.scheduling.jobs import job_specs
from arena.scheduling.runs import JobSpec, run_once
from arena.workers import roster
from tests.engine.live_world import launch_live, store_market
from tests.fakes.polymarket_server import real_polymarket
from tests.fakes.venue_server import Fault
from tests.workers import ON_POSTGRES
from tests.workers.llm_study import start_worker, stop

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=60)


def _url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def _status(engine: Engine, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    env = {"ARENA_DATABASE_URL": _url(engine), **(env or {})}
    result = CliRunner().invoke(app, ["status", "--json", *args], env=env)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _kinds(report: dict[str, Any]) -> list[str]:
    return [p["kind"] for p in report["problems"]]


def _live_cohort(engine: Engine, start: datetime, **extra: Any) -> str:
    return launch_live(
        engine, start, [{"name": "h", "kind": "hold"}], name="probe", every="1h", rounds=3, **extra
    )


def _serving(engine: Engine, owner: str, at: datetime, **env: str) -> None:
    """A serve process's row, recorded with the settings it runs with (``env``: ARENA_* values)."""
    settings = Settings(**env)  # type: ignore[arg-type]
    presence.join(engine, owner, "host-a", 42, at, settings)


def test_a_quiet_database_is_healthy_and_exits_0(engine: Engine) -> None:
    code, report = _status(engine)
    assert (code, report["healthy"], report["problems"]) == (0, True, [])
    assert [j["name"] for j in report["jobs"]] == list(job_specs(Settings()))
    assert all(j["every_seconds"] is None for j in report["jobs"])  # nobody recorded a cadence yet
    assert report["scheduler"] == {"leader": None, "lease_until": None, "standbys": [], "settings": None}


def test_no_scheduler_for_an_active_live_cohort_exits_1_with_the_reason(engine: Engine) -> None:
    _live_cohort(engine, datetime.now(UTC) + timedelta(days=1))
    code, report = _status(engine)
    assert code == 1 and _kinds(report) == ["scheduler_down"]
    assert "no `arena serve` holds the scheduler lease (never held)" in report["problems"][0]["reason"]
    text = CliRunner().invoke(app, ["status"], env={"ARENA_DATABASE_URL": _url(engine)})
    assert text.exit_code == 1 and "scheduler_down scheduler: 1 live cohort(s) active" in text.output


def test_cadences_and_standbys_are_what_the_serving_processes_recorded(engine: Engine) -> None:
    _serving(engine, "a:1#aa", NOW, rounds_every="20s", sync_every="2m", sync_top_n="40")
    _serving(engine, "b:2#bb", NOW)  # a standby, with the defaults
    _serving(engine, "c:3#cc", NOW - timedelta(minutes=5))  # silent for longer than its lease
    presence.beat(engine, "c:3#cc", NOW - timedelta(minutes=5))
    assert leases.try_acquire(engine, "a:1#aa/2", NOW, LEASE)  # a's second tenure leads
    health = check(engine, NOW)
    assert health.leader is not None and health.leader.owner == "a:1#aa/2"
    assert [s.owner for s in health.standbys] == ["b:2#bb"]
    every = {j.name: j.every for j in health.jobs}
    assert every["rounds"] == timedelta(seconds=20) and every["sync"] == timedelta(minutes=2)
    assert health.recorded is not None and health.recorded["sync"]["top_n"] == 40
    # The caller's own environment says otherwise: it is not what the server runs with.
    _, report = _status(engine, env={"ARENA_ROUNDS_EVERY": "15m"})
    assert {j["name"]: j["every_seconds"] for j in report["jobs"]}["rounds"] == 20


def test_a_sync_whose_listing_answers_503_is_partial_not_ok(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    with real_polymarket() as fake:
        monkeypatch.setenv("ARENA_GAMMA_URL", fake.url)
        monkeypatch.setenv("ARENA_CLOB_URL", fake.url)
        _live_cohort(engine, datetime.now(UTC) + timedelta(days=1))
        spec = job_specs(Settings())["sync"]
        clock = SimulatedClock(datetime.now(UTC))
        assert run_once(spec, engine, clock)  # a healthy first sync stores the markets
        fake.fail("/markets/keyset", Fault(status=503), times=50)  # the listing is down, lookups are not
        clock.advance(timedelta(minutes=15))
        assert run_once(spec, engine, clock)
    health = check(engine, clock.now())
    sync = next(j for j in health.jobs if j.name == "sync")
    assert sync.outcome == "partial" and sync.last_ok is False
    assert any("listing" in w and "503" in w for w in sync.warnings), sync.warnings
    (problem,) = [p for p in health.problems if p.kind == "job_partial"]
    assert problem.subject == "sync" and "503" in problem.reason


def test_a_worker_silent_past_its_lease_is_gone_and_a_problem_until_replaced(engine: Engine) -> None:
    roster.join(engine, "h1:10:aa", "h1", 10, NOW - timedelta(minutes=5), timedelta(seconds=30))
    roster.join(engine, "h2:20:bb", "h2", 20, NOW - timedelta(days=3), timedelta(seconds=30))
    roster.join(engine, "h3:30:cc", "h3", 30, NOW - timedelta(seconds=10), timedelta(seconds=30))
    health = check(engine, NOW)
    states = {w.name: w.state for w in health.workers}
    assert states == {"h1:10:aa": "gone", "h2:20:bb": "gone", "h3:30:cc": "idle"}
    # The one gone for days is listed, no longer reported; the recent one is.
    assert [(p.kind, p.subject) for p in health.problems] == [("worker_gone", "h1:10:aa")]
    roster.join(engine, "h1:11:dd", "h1", 11, NOW, timedelta(seconds=30))  # restarted on its host
    assert check(engine, NOW).problems == []


@ON_POSTGRES
def test_a_killed_worker_shows_as_gone_once_its_lease_has_passed(engine: Engine, tmp_path: Path) -> None:
    worker = start_worker(_url(engine), tmp_path / "worker.log", lease=2)
    try:
        deadline = time.monotonic() + 60
        while not (workers := check(engine, datetime.now(UTC)).workers) or workers[0].state != "idle":
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
            time.sleep(0.1)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        _, report = _status(engine)
        assert [w["state"] for w in report["workers"]] == ["idle"]  # within its lease: not yet
        time.sleep(2.5)
        code, report = _status(engine)
    finally:
        stop(worker)
    assert code == 1 and [w["state"] for w in report["workers"]] == ["gone"]
    assert [p["kind"] for p in report["problems"]] == ["worker_gone"]


def test_a_round_nobody_runs_makes_its_cohort_stuck(engine: Engine) -> None:
    cohort = _live_cohort(engine, NOW - timedelta(hours=2), round_budget="5m", call_timeout="1m")
    health = check(engine, NOW)
    stuck = [p for p in health.problems if p.kind == "cohort_stuck"]
    assert [p.subject for p in stuck] == [cohort]
    assert "round 0 was due at 2026-03-02 10:00:00 UTC and is not finished (7200 s late)" in stuck[0].reason
    # Within its allowance (budget + call timeout + the rounds cadence + slack) it is not stuck.
    early = check(engine, NOW - timedelta(hours=2) + timedelta(minutes=8))
    assert [p.kind for p in early.problems if p.kind == "cohort_stuck"] == []


def test_a_position_waiting_long_for_a_resolution_makes_its_cohort_stuck(engine: Engine) -> None:
    market = "polymarket:old"
    store_market(engine, market, NOW - timedelta(days=40), [(NOW - timedelta(days=41), "0.5")])
    cohort = _live_cohort(engine, NOW + timedelta(days=1))
    opened = NOW - timedelta(days=41)
    with session_scope(engine) as session:
        agent = session.exec(select(AgentRow.id).where(AgentRow.cohort_id == cohort)).one()
        held = {"agent_id": agent, "position_id": "p1", "market_id": market, "outcome": "YES"}
        money = {"shares": Decimal(10), "cost_basis": Decimal(5)}
        session.add(PositionRow(**held, **money, opened_at=opened, updated_at=opened))
    (problem,) = [p for p in check(engine, NOW).problems if p.kind == "cohort_stuck"]
    assert "1 open position(s) wait for a resolution of markets closed over 30 days ago" in problem.reason


def test_a_run_that_did_nothing_logs_at_debug_and_one_that_did_at_info(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    nothing = Summary("0 portfolios marked", idle=True)
    idle = JobSpec("marks", timedelta(minutes=1), lambda _e, _c: nothing, "t")
    busy = JobSpec("settle", timedelta(minutes=1), lambda _e, _c: Summary("2 positions settled"), "t")
    with caplog.at_level(logging.DEBUG, logger="arena"):
        run_once(idle, engine, SimulatedClock(NOW))
        run_once(busy, engine, SimulatedClock(NOW))
        run_once(busy, engine, SimulatedClock(NOW))  # the same period: skipped
    levels = {r.getMessage(): r.levelno for r in caplog.records}
    assert levels["job marks: 0 portfolios marked"] == logging.DEBUG
    assert levels["job settle: 2 positions settled"] == logging.INFO
    assert [r.levelno for r in caplog.records if "already claimed" in r.getMessage()] == [logging.DEBUG]
