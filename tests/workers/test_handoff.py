"""``arena serve``'s hand-over to workers, in one process: the switch on live workers, waiting for
the units it queued, a failed unit failing the job, and work already queued not queued again."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from arena.core.clock import SimulatedClock
from arena.engine.live.jobs import JobFailure
from arena.scheduling import handoff
from arena.workers import queue, roster
from tests.engine.helpers import config, launch_cohort, tiny_dataset
from tests.workers import ON_POSTGRES

pytestmark = ON_POSTGRES
NOW = datetime.now(UTC)  # roster heartbeats and the worker's lease compare with the same instants
TTL = timedelta(seconds=30)


def _cohorts(engine: Engine, directory: Path, n: int) -> list[str]:
    dataset = tiny_dataset(directory / "data")
    agents = [{"name": "hold", "kind": "hold"}]
    return [launch_cohort(engine, config(dataset, agents, name=f"c{i}"))[0] for i in range(n)]


def test_without_an_idle_worker_the_jobs_run_in_process(engine: Engine) -> None:
    clock = SimulatedClock(NOW)
    roster.join(engine, "gone", "host", 1, NOW - timedelta(minutes=2), TTL)  # silent for two minutes
    assert roster.idle(engine, NOW) == 0
    said = handoff.marks(engine, clock, environ={}, leading=lambda: True, within=TTL)
    assert said == "0 portfolios marked"  # the in-process job's own message
    roster.beat(engine, "gone", NOW, 7)  # back, but busy with unit 7 (a long replay, say)
    assert roster.idle(engine, NOW) == 0
    assert handoff.marks(engine, clock, environ={}, leading=lambda: True, within=TTL) == "0 portfolios marked"
    roster.beat(engine, "gone", NOW, None)
    assert roster.idle(engine, NOW) == 1
    said = handoff.marks(engine, clock, environ={}, leading=lambda: True, within=TTL)
    assert said == "nothing to hand to workers: no marks due"


def _worker(engine: Engine, error: str | None, taken: threading.Event) -> threading.Thread:
    """A stand-in worker: takes the next unit, then finishes it (``error``: failed)."""

    def work() -> None:
        while (lease := queue.take(engine, "w", NOW, TTL)) is None:
            taken.wait(0.05)
        taken.set()
        queue.finish(engine, lease, NOW, error=error)

    thread = threading.Thread(target=work)
    thread.start()
    return thread


def test_the_job_waits_for_its_units_and_reports_them(engine: Engine, tmp_path: Path) -> None:
    cohorts = _cohorts(engine, tmp_path, 2)
    taken = threading.Event()
    worker = _worker(engine, None, taken)
    work = [(cohorts[0], cohorts[0])]
    said = handoff.hand_over(engine, SimulatedClock(NOW), queue.MARKS, work, leading=lambda: True, within=TTL)
    worker.join()
    assert said == "1 marks unit(s) for workers: 1 done"


def test_a_failed_unit_fails_the_job(engine: Engine, tmp_path: Path) -> None:
    (cohort,) = _cohorts(engine, tmp_path, 1)
    worker = _worker(engine, "LedgerConflict: boom", threading.Event())
    with pytest.raises(JobFailure, match=r"unit 1 \(settle of .+\): LedgerConflict: boom"):
        handoff.hand_over(
            engine, SimulatedClock(NOW), queue.SETTLE, [(cohort, cohort)], leading=lambda: True, within=TTL
        )
    worker.join()


def test_work_already_queued_is_reused_and_waiting_is_bounded(engine: Engine, tmp_path: Path) -> None:
    cohorts = _cohorts(engine, tmp_path, 2)
    clock = SimulatedClock(NOW)
    first, _ = queue.enqueue(engine, queue.MARKS, cohorts[0], NOW, cohort_id=cohorts[0])
    work = [(c, c) for c in cohorts]
    said = handoff.hand_over(engine, clock, queue.MARKS, work, leading=lambda: True, within=timedelta(0))
    reused = "2 marks unit(s) for workers (1 already queued): 0 done, 2 still queued or running"
    assert said.startswith(f"{reused} (units [{first}, ")
    said = handoff.hand_over(engine, clock, queue.MARKS, work, leading=lambda: False, within=TTL)
    assert said.startswith("2 marks unit(s) for workers (2 already queued): 0 done")  # no longer leading
