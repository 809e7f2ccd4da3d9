"""``LeaseFence``: a write unit of work on a guarded engine commits only while the lease is ours."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, func
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, select

from arena.core.clock import SimulatedClock
from arena.db import leases
from arena.db.engine import session_scope
from arena.db.leases import FenceLost, LeaseFence
from arena.db.models import JobRunRow
from arena.scheduling.runs import JobSpec, run_once

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TTL = timedelta(seconds=60)
LATE = T0 + TTL + timedelta(seconds=1)


def _job_runs(engine: Engine) -> int:
    with Session(engine) as session:
        return int(session.exec(select(func.count()).select_from(JobRunRow)).one())


def _write(engine: Engine, job: str) -> None:
    with session_scope(engine) as session:
        session.add(JobRunRow(job=job, bucket=T0, started_at=T0))


def test_a_stale_owners_commit_is_refused_and_writes_nothing(engine: Engine) -> None:
    assert leases.try_acquire(engine, "old", T0, TTL)
    assert leases.try_acquire(engine, "new", LATE, TTL)  # "old" fell silent past its lease
    with pytest.raises(FenceLost) as lost:
        _write(LeaseFence("old").guard(engine), "marks")
    assert (lost.value.owner, lost.value.holder) == ("old", "new")
    assert _job_runs(engine) == 0
    _write(LeaseFence("new").guard(engine), "marks")  # the holder's own commit goes through
    assert _job_runs(engine) == 1


def test_a_fenced_job_records_nothing_once_the_lease_is_gone(engine: Engine) -> None:
    """Neither the period's claim nor the body's writes land; FenceLost is not recorded as a
    job failure (recording it would be a write too)."""
    assert leases.try_acquire(engine, "new", LATE, TTL)
    ran: list[str] = []

    def body(guarded: Engine, _clock: SimulatedClock) -> str:
        ran.append("body")
        _write(guarded, "settle")
        return "settled"

    with pytest.raises(FenceLost):
        run_once(JobSpec("marks", TTL, body, "t"), LeaseFence("old").guard(engine), SimulatedClock(LATE))
    assert ran == [] and _job_runs(engine) == 0  # the claim itself was refused


def test_reads_are_not_fenced(engine: Engine) -> None:
    """Only write units check the lease: a stale process may still look, never commit."""
    with session_scope(LeaseFence("nobody").guard(engine), write=False) as session:
        assert session.exec(select(func.count()).select_from(JobRunRow)).one() == 0


def test_a_lost_lease_cannot_be_renewed_even_after_the_taker_released_it(engine: Engine) -> None:
    """The leader renews only its own row: once another process led, the old tenure is over
    (``arena serve`` comes back under a new token instead of reviving fenced jobs)."""
    assert leases.try_acquire(engine, "old", T0, TTL)
    assert leases.renew(engine, "old", T0 + timedelta(seconds=5), TTL)
    assert leases.try_acquire(engine, "new", LATE + timedelta(seconds=5), TTL)
    leases.release(engine, "new")
    assert not leases.renew(engine, "old", LATE + timedelta(seconds=6), TTL)
    held = leases.holder(engine)
    assert held is not None and held.owner == "new"


@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres)])
def test_on_postgres_a_takeover_waits_for_the_fenced_commit_in_flight(engine: Engine) -> None:
    """Between the fence's check and the commit, the lease cannot move: the check share-locks
    the row, so a taker's UPDATE waits (here: gives up after a short lock_timeout)."""
    assert leases.try_acquire(engine, "old", T0, TTL)
    with session_scope(engine) as session:
        LeaseFence("old").check(session)
        with engine.connect() as taker:
            taker.exec_driver_sql("SET lock_timeout = '300ms'")
            with pytest.raises(OperationalError, match="lock timeout"):
                taker.exec_driver_sql("UPDATE scheduler_lease SET owner = 'new' WHERE name = 'scheduler'")
    assert leases.try_acquire(engine, "new", LATE, TTL)  # once the commit is over, it goes through
