"""``arena worker`` processes on PostgreSQL under faults: killed, paused past their lease, started
before the database, cut off by a database restart. Each disturbed run must end with the same
fills, marks and decisions as an undisturbed ``arena replay`` of the same config, with no
decision executed twice and every ledger equal to its fill log.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, make_url
from sqlmodel import Session, col, select

from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import WorkerRow, WorkUnitRow
from tests.engine.helpers import synthetic_dataset
from tests.engine.ledger_log import fill_count
from tests.workers import ON_POSTGRES
from tests.workers.compare import TIMEOUT, cohort_named, run, same_as_reference
from tests.workers.compare import reference as undisturbed_run
from tests.workers.study import start_worker, study_config
from tests.workers.tcp_proxy import TcpProxy

pytestmark = [ON_POSTGRES, pytest.mark.slow]


def _cohort(engine: Engine, name: str) -> str:
    return cohort_named(engine, name)


def _units(engine: Engine) -> list[WorkUnitRow]:
    with Session(engine) as session:
        return list(session.exec(select(WorkUnitRow).order_by(col(WorkUnitRow.id))))


def _wait(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _finished(worker: subprocess.Popen[str]) -> str:
    out, _ = worker.communicate(timeout=TIMEOUT)
    assert worker.returncode == 0, out[-3000:]
    return out


@pytest.fixture
def pg(db_url: str) -> Engine:
    upgrade(db_url)
    return make_engine(db_url)


def test_two_workers_drain_a_queued_study(pg: Engine, db_url: str, tmp_path: Path) -> None:
    dataset = synthetic_dataset(tmp_path / "data")
    configs = [
        study_config(tmp_path / f"s{i}.toml", dataset, name=f"s{i}", seed=i, every="2d") for i in range(3)
    ]
    out = run("replay", "--queue", *map(str, configs), "--database-url", db_url)
    assert "3 replay(s) queued" in out
    workers = [start_worker(db_url), start_worker(db_url)]
    outputs = [_finished(w) for w in workers]
    assert all("queue empty: stopping" in o and "took unit" in o for o in outputs)  # both worked
    units = _units(pg)
    assert [(u.state, u.attempts) for u in units] == [("done", 1)] * 3
    with Session(pg) as session:
        assert sum(w.units_done for w in session.exec(select(WorkerRow))) == 3
    for i, config in enumerate(configs):
        same_as_reference(pg, _cohort(pg, f"s{i}"), undisturbed_run(tmp_path, config, f"s{i}"))
    listed = run("cohort", "list", "--database-url", db_url)
    assert listed.count("done") == 3


def test_a_killed_workers_unit_is_taken_over_and_runs_once(pg: Engine, db_url: str, tmp_path: Path) -> None:
    config = study_config(tmp_path / "k.toml", synthetic_dataset(tmp_path / "data", days=60), name="k")
    reference = undisturbed_run(tmp_path, config, "k")
    run("replay", "--queue", str(config), "--database-url", db_url)
    cohort = _cohort(pg, "k")
    half = fill_count(*reference) // 2
    first = start_worker(db_url)
    _wait(lambda: fill_count(pg, cohort) >= half, "half the fills")
    first.send_signal(signal.SIGKILL)
    first.wait()
    second = start_worker(db_url)
    assert "took unit 1" in _finished(second)
    (unit,) = _units(pg)
    assert (unit.state, unit.attempts) == ("done", 2)
    same_as_reference(pg, cohort, reference)


def test_a_paused_worker_cannot_commit_after_its_unit_was_taken_over(
    pg: Engine, db_url: str, tmp_path: Path
) -> None:
    config = study_config(tmp_path / "p.toml", synthetic_dataset(tmp_path / "data", days=60), name="p")
    reference = undisturbed_run(tmp_path, config, "p")
    run("replay", "--queue", str(config), "--database-url", db_url)
    cohort = _cohort(pg, "p")
    paused = start_worker(db_url)
    _wait(lambda: fill_count(pg, cohort) >= fill_count(*reference) // 3, "a third of the fills")
    paused.send_signal(signal.SIGSTOP)
    try:
        taker = start_worker(db_url)
        took = _finished(taker)
        assert "took unit 1" in took
    finally:
        paused.send_signal(signal.SIGCONT)
    late = _finished(paused)
    # Woken, the paused worker finds its lease gone, its finish refused, or (paused inside a
    # transaction, which PostgreSQL ended after one lease time) its connection closed.
    woke = (
        "lost the lease of unit 1",
        "refused: unit 1 was taken over",
        "connection lost while running unit 1",
    )
    assert any(line in late for line in woke), late[-2000:]
    (unit,) = _units(pg)
    assert (unit.state, unit.attempts) == ("done", 2)
    assert unit.lease_owner == took.split()[1]  # finished by the taker ("worker NAME ready")
    same_as_reference(pg, cohort, reference)


def test_workers_wait_for_the_database_and_survive_its_restart(
    pg: Engine, db_url: str, tmp_path: Path
) -> None:
    config = study_config(tmp_path / "r.toml", synthetic_dataset(tmp_path / "data", days=60), name="r")
    reference = undisturbed_run(tmp_path, config, "r")
    run("replay", "--queue", str(config), "--database-url", db_url)
    cohort = _cohort(pg, "r")
    url = make_url(db_url)
    proxy = TcpProxy((url.host or "127.0.0.1", url.port or 5432))
    through_proxy = url.set(port=proxy.port).render_as_string(hide_password=False)
    worker = start_worker(through_proxy)  # the "server" is down: nothing listens there yet
    assert worker.stdout is not None
    first = worker.stdout.readline()
    assert "database unreachable" in first, first  # waiting, not exiting
    proxy.up()
    _wait(lambda: fill_count(pg, cohort) >= fill_count(*reference) // 3, "a third of the fills")
    proxy.down()  # the restart: every connection cut, nothing listening for a while
    time.sleep(3)
    proxy.up()
    out = _finished(worker)
    proxy.down()
    assert "database connection lost while running unit 1" in out, out[-3000:]
    assert [u.attempts for u in _units(pg)] == [2]  # the cut run's unit, taken again after its lease
    same_as_reference(pg, cohort, reference)
