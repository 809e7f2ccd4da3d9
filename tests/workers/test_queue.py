"""The queue's leases: one taker per unit, renewals and finishes fenced by the lease token."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session

from arena.db.engine import make_engine
from arena.db.models import WorkUnitRow
from arena.workers import queue
from tests.engine.helpers import config, launch_cohort, tiny_dataset
from tests.workers import ON_POSTGRES

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TTL = timedelta(seconds=30)
pytestmark = ON_POSTGRES


def _cohorts(engine: Engine, directory: Path, n: int) -> list[str]:
    dataset = tiny_dataset(directory / "data")
    agents = [{"name": "hold", "kind": "hold"}]
    return [launch_cohort(engine, config(dataset, agents, name=f"study-{i}"))[0] for i in range(n)]


def test_each_unit_goes_to_one_taker_oldest_first(engine: Engine, tmp_path: Path) -> None:
    first, second = _cohorts(engine, tmp_path, 2)
    ids = [queue.enqueue_replay(engine, c, T0) for c in (first, second)]
    assert queue.enqueue_replay(engine, first, T0) == ids[0]  # queued twice: one unit
    a = queue.take(engine, "a", T0, TTL)
    b = queue.take(engine, "b", T0, TTL)
    assert a is not None and b is not None
    assert (a.cohort_id, b.cohort_id) == (first, second)
    assert queue.take(engine, "c", T0, TTL) is None  # both leased, none expired


def test_skip_locked_lets_a_second_taker_pass_a_locked_unit(engine: Engine, tmp_path: Path) -> None:
    first, second = _cohorts(engine, tmp_path, 2)
    for cohort in (first, second):
        queue.enqueue_replay(engine, cohort, T0)
    # Without SKIP LOCKED the second taker would wait for the lock: make that wait fail, not hang.
    options = f"{engine.url.query.get('options', '')} -clock_timeout=5s".strip()
    other = make_engine(engine.url.update_query_dict({"options": options}))
    with Session(engine) as blocker, blocker.begin():  # holds the first unit's row lock, uncommitted
        locked = blocker.get(WorkUnitRow, 1, with_for_update=True)
        assert locked is not None and locked.cohort_id == first
        lease = queue.take(other, "b", T0, TTL)  # would block forever without SKIP LOCKED
        assert lease is not None and lease.cohort_id == second
    other.dispose()


def test_a_lost_lease_can_neither_renew_nor_finish(engine: Engine, tmp_path: Path) -> None:
    (cohort,) = _cohorts(engine, tmp_path, 1)
    queue.enqueue_replay(engine, cohort, T0)
    slow = queue.take(engine, "slow", T0, TTL)
    assert slow is not None
    assert queue.renew(engine, slow, T0 + TTL / 2, TTL)  # still ours
    later = T0 + TTL / 2 + TTL + timedelta(seconds=1)  # past the renewed lease
    fast = queue.take(engine, "fast", later, TTL)
    assert fast is not None and fast.unit_id == slow.unit_id and fast.attempt == 2
    assert not queue.renew(engine, slow, later, TTL)
    assert not queue.finish(engine, slow, later)  # the fenced write matches nothing
    assert queue.finish(engine, fast, later, error="boom")
    with Session(engine) as session:
        unit = session.get(WorkUnitRow, fast.unit_id)
        assert unit is not None
        assert (unit.state, unit.error, unit.attempts, unit.lease_owner) == ("failed", "boom", 2, "fast")


def test_a_unit_that_keeps_losing_its_worker_is_given_up(engine: Engine, tmp_path: Path) -> None:
    (cohort,) = _cohorts(engine, tmp_path, 1)
    queue.enqueue_replay(engine, cohort, T0)
    at = T0
    for attempt in range(1, 4):
        lease = queue.take(engine, f"w{attempt}", at, TTL, max_attempts=3)
        assert lease is not None and lease.attempt == attempt
        at += TTL + timedelta(seconds=1)  # each taker dies: the lease expires
    assert queue.take(engine, "w4", at, TTL, max_attempts=3) is None
    with Session(engine) as session:
        unit = session.get(WorkUnitRow, 1)
        assert unit is not None and unit.state == "failed" and "after 3 attempts" in (unit.error or "")


def test_retry_later_hides_the_unit_until_its_time(engine: Engine, tmp_path: Path) -> None:
    (cohort,) = _cohorts(engine, tmp_path, 1)
    queue.enqueue_replay(engine, cohort, T0)
    lease = queue.take(engine, "a", T0, TTL)
    assert lease is not None
    assert queue.retry_later(engine, lease, T0 + timedelta(minutes=1), "cohort busy")
    assert queue.take(engine, "b", T0 + timedelta(seconds=59), TTL) is None
    again = queue.take(engine, "b", T0 + timedelta(minutes=1), TTL)
    assert again is not None and again.attempt == 1  # a busy cohort is not a failed attempt
