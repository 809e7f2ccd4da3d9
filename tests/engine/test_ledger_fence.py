"""The ledger fence counts an agent's fills only once it holds the agent's row lock: a writer that
held the lock and committed meanwhile is seen (PostgreSQL, where the lock and the count go to the
server in one pipeline yet stay two statements, each with its own snapshot)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from arena.db.engine import session_scope
from arena.engine.rounds import run as rounds
from arena.engine.store.ledger_store import stale_books
from tests.engine.helpers import config, day, launch_cohort, runtime, tiny_dataset

COPY_A_FILL = (
    "INSERT INTO fill (decision_id, leg_index, agent_id, market_id, outcome, position_id, kind, amount,"
    " price, shares, fee, realized_pnl, max_bet, filled_at)"
    " SELECT decision_id, leg_index + 1000, agent_id, market_id, outcome, position_id, kind, amount,"
    " price, shares, fee, realized_pnl, max_bet, filled_at FROM fill WHERE agent_id = %s ORDER BY id LIMIT 1"
)


# SQLite's BEGIN IMMEDIATE serialises writers before their first statement: nothing to race
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_the_count_sees_a_fill_committed_while_waiting_for_the_lock(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = launch_cohort(
        engine, config(tiny_dataset(tmp_path / "d"), [{"name": "a", "kind": "favorite"}])
    )
    rt = runtime(engine, cohort_id, source)
    asyncio.run(rounds.run_round(rt, 0, day(0)))
    book = rt.agents[0].book
    assert book.fill_count > 0
    found: list[tuple[dict[int, str], float]] = []

    def fence() -> None:
        started = time.monotonic()
        with session_scope(engine) as session:
            found.append((stale_books(session, [book]), time.monotonic() - started))

    with engine.connect() as other:
        other.exec_driver_sql("SELECT id FROM agent WHERE id = %s FOR UPDATE", (book.agent_id,))
        other.exec_driver_sql(COPY_A_FILL, (book.agent_id,))
        waiting = threading.Thread(target=fence)
        waiting.start()
        time.sleep(0.3)
        other.commit()
    waiting.join(10)
    [(stale, waited)] = found
    assert waited >= 0.25  # it did wait for the lock
    assert stale == {
        book.agent_id: f"agent {book.agent_id}: the database holds {book.fill_count + 1} fills, "
        f"the ledger was built from {book.fill_count}"
    }
