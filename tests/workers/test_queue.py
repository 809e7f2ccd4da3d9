"""The queue's leases: one taker per unit, renewals and finishes fenced by the lease token."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, select

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


def test_two_simultaneous_enqueues_of_one_cohort_make_one_unit(engine: Engine, tmp_path: Path) -> None:
    """The second enqueue runs while the first one's insert is not committed yet: a check before
    inserting would see no unit and add a second; the unique index makes it wait, then reuse."""
    (cohort,) = _cohorts(engine, tmp_path, 1)
    first = Session(engine)
    first.begin()
    first.execute(
        insert(WorkUnitRow.__table__).values(  # type: ignore[attr-defined]
            kind="replay",
            dedup_key=cohort,
            cohort_id=cohort,
            state="queued",
            attempts=0,
            available_at=T0,
            enqueued_at=T0,
        )
    )
    found: list[tuple[int, bool]] = []
    second = threading.Thread(
        target=lambda: found.append(queue.enqueue(engine, "replay", cohort, T0, cohort_id=cohort))
    )
    second.start()
    second.join(timeout=1)
    assert second.is_alive()  # waiting on the first insert, not deciding on a stale read
    first.commit()
    first.close()
    second.join(timeout=30)
    assert found == [(1, False)]
    with Session(engine) as session:
        assert len(session.exec(select(WorkUnitRow)).all()) == 1


def test_many_threads_enqueueing_the_same_work_make_one_unit_per_key(engine: Engine, tmp_path: Path) -> None:
    cohorts = _cohorts(engine, tmp_path, 2)
    start = threading.Barrier(8)
    got: list[tuple[str, int, bool]] = []

    def enqueue(i: int) -> None:
        cohort = cohorts[i % 2]
        start.wait()
        got.append((cohort, *queue.enqueue(engine, queue.MARKS, cohort, T0, cohort_id=cohort)))

    threads = [threading.Thread(target=enqueue, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(new for _, _, new in got) == [False] * 6 + [True] * 2
    per_cohort = {cohort: {unit for c, unit, _ in got if c == cohort} for cohort in cohorts}
    assert sorted(len(ids) for ids in per_cohort.values()) == [1, 1]
    with Session(engine) as session:
        assert len(session.exec(select(WorkUnitRow)).all()) == 2


def test_a_finished_unit_does_not_stop_the_same_work_being_queued_again(
    engine: Engine, tmp_path: Path
) -> None:
    (cohort,) = _cohorts(engine, tmp_path, 1)
    unit, new = queue.enqueue(engine, queue.SETTLE, cohort, T0, cohort_id=cohort)
    assert new and queue.enqueue(engine, queue.MARKS, cohort, T0, cohort_id=cohort)[1]  # another kind
    lease = queue.take(engine, "a", T0, TTL)
    assert lease is not None and (lease.unit_id, lease.key) == (unit, cohort)
    assert queue.enqueue(engine, queue.SETTLE, cohort, T0, cohort_id=cohort) == (unit, False)  # running
    assert queue.finish(engine, lease, T0)
    again, new = queue.enqueue(engine, queue.SETTLE, cohort, T0, cohort_id=cohort)
    assert new and again != unit
    sync, _ = queue.enqueue(engine, queue.SYNC, "polymarket", T0)  # a venue's unit: no cohort
    assert queue.enqueue(engine, queue.SYNC, "polymarket", T0) == (sync, False)


def test_live_units_are_taken_before_a_backlog_of_replays(engine: Engine, tmp_path: Path) -> None:
    first, second = _cohorts(engine, tmp_path, 2)
    queue.enqueue_replay(engine, first, T0)
    marks, _ = queue.enqueue(engine, queue.MARKS, second, T0 + timedelta(minutes=5), cohort_id=second)
    later = T0 + timedelta(minutes=5)
    taken = [queue.take(engine, w, later, TTL) for w in ("a", "b")]
    assert [(t.unit_id, t.kind) for t in taken if t is not None] == [(marks, "marks"), (1, "replay")]
