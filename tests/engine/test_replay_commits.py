"""``ARENA_REPLAY_SYNCHRONOUS_COMMIT=off`` reaches a replay's own write transactions and nothing
else: the replay lease and the run's ``job_run`` row keep durable commits, and the stored
results are the same either way."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event
from sqlmodel import Session, col, select

from arena.core.clock import SimulatedClock
from arena.db.models import AgentRow, FillRow, PortfolioSnapshotRow
from arena.engine.replay.runner import replay_cohort
from tests.engine.helpers import config, day, launch_cohort, synthetic_dataset

RELAX = "SET LOCAL synchronous_commit = off"
CHECK_NOW = "SET CONSTRAINTS ALL IMMEDIATE"


@contextmanager
def transactions(engine: Engine) -> Iterator[list[list[str]]]:
    """The statements of every committed transaction on ``engine``, in order."""
    done: list[list[str]] = []
    current: list[str] = []

    def statement(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        current.append(sql)

    def commit(_conn: Any) -> None:
        done.append(list(current))
        current.clear()

    def rollback(_conn: Any) -> None:
        current.clear()

    listeners = (("before_cursor_execute", statement), ("commit", commit), ("rollback", rollback))
    for name, fn in listeners:
        event.listen(engine, name, fn)
    try:
        yield done
    finally:
        for name, fn in listeners:
            event.remove(engine, name, fn)


def _replay(
    engine: Engine, tmp_path: Path, name: str, *, synchronous_commit: bool
) -> tuple[list[list[str]], Any]:
    data = config(synthetic_dataset(tmp_path / name), [{"name": "k", "kind": "kelly"}], name=name)
    cohort_id, source = launch_cohort(engine, data)
    with transactions(engine) as committed:
        asyncio.run(
            replay_cohort(
                engine,
                cohort_id,
                source,
                environ={},
                wall_clock=SimulatedClock(day(400)),
                synchronous_commit=synchronous_commit,
            )
        )
    with Session(engine) as session:
        fills = session.exec(
            select(FillRow).join(AgentRow).where(AgentRow.cohort_id == cohort_id).order_by(col(FillRow.id))
        )
        marks = session.exec(
            select(PortfolioSnapshotRow)
            .where(PortfolioSnapshotRow.cohort_id == cohort_id)
            .order_by(col(PortfolioSnapshotRow.marked_at))
        )
        stored = (
            [(f.market_id, f.kind, f.amount, f.shares, f.filled_at) for f in fills],
            [(s.marked_at, s.total_value) for s in marks],
        )
    return committed, stored


def _writes(committed: list[list[str]]) -> list[list[str]]:
    return [t for t in committed if any(s.lstrip().upper().startswith(("INSERT", "UPDATE")) for s in t)]


def test_only_the_replays_own_writes_skip_the_flush(engine: Engine, tmp_path: Path, backend: str) -> None:
    durable, durable_rows = _replay(engine, tmp_path, "durable", synchronous_commit=True)
    relaxed, relaxed_rows = _replay(engine, tmp_path, "relaxed", synchronous_commit=False)
    assert relaxed_rows == durable_rows and durable_rows[0] and durable_rows[1]
    assert not any(RELAX in t for t in durable)
    if backend == "postgres":  # a pipelined flush of marks checks its foreign keys as it writes
        for committed, first in ((durable, 0), (relaxed, 1)):  # relaxed: after its SET LOCAL
            marks = [t for t in _writes(committed) if any("INTO portfolio_snapshot" in s for s in t)]
            assert marks and all(t[first] == CHECK_NOW for t in marks)
    if engine.dialect.name != "postgresql":  # SQLite's WAL commits never wait for a flush
        assert not any(RELAX in t for t in relaxed)
        return
    writes = _writes(relaxed)
    lease_and_run = [t for t in writes if any("scheduler_lease" in s or "job_run" in s for s in t)]
    assert lease_and_run and not any(RELAX in t for t in lease_and_run)
    replay_writes = [t for t in writes if t not in lease_and_run]
    assert replay_writes and all(t[0] == RELAX for t in replay_writes)
