"""``portfolio_close`` always names each agent's last mark of every UTC day, however marks arrive."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from sqlalchemy import Engine
from sqlmodel import select

from arena.db.engine import session_scope
from arena.db.models import PortfolioCloseRow, PortfolioSnapshotRow
from arena.db.upsert import insert_ignore
from arena.engine.books.marks import record_closes
from tests.db.rows import T0, build_world

EAST = timezone(timedelta(hours=5))  # a mark written with an offset still closes its UTC day


def mark(agent_id: int, cohort_id: str, at: datetime) -> dict[str, object]:
    return {
        "agent_id": agent_id,
        "cohort_id": cohort_id,
        "marked_at": at,
        "cash": Decimal(100),
        "positions_value": Decimal(0),
        "total_value": Decimal(100),
        "realized_pnl": Decimal(0),
        "unrealized_pnl": Decimal(0),
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_closes_are_the_last_mark_of_each_utc_day_in_any_write_order(engine: Engine, seed: int) -> None:
    world = build_world(engine)
    rng = random.Random(seed)
    midnight = T0.replace(hour=0)
    instants = {midnight + timedelta(days=1) - timedelta(microseconds=1), midnight + timedelta(days=1)}
    instants |= {midnight + timedelta(seconds=rng.randrange(4 * 86_400)) for _ in range(60)}
    marks = [
        mark(agent, world.cohort_id, at.astimezone(EAST) if rng.random() < 0.3 else at)
        for agent in world.agent_ids
        for at in instants
    ]
    rng.shuffle(marks)
    batches = [marks[i : i + 7] for i in range(0, len(marks), 7)]
    for batch in batches + batches[:3]:  # later batches re-written: nothing moves
        with session_scope(engine) as session:
            insert_ignore(session, PortfolioSnapshotRow, batch, on=["agent_id", "marked_at"])
            record_closes(session, batch)

    expected: dict[tuple[int, date], datetime] = {}
    for m in marks:
        at = m["marked_at"]
        assert isinstance(at, datetime)
        key = (int(str(m["agent_id"])), at.astimezone(UTC).date())
        expected[key] = max(expected.get(key, at), at)
    with session_scope(engine, write=False) as session:
        stored = {(c.agent_id, c.day): c.closed_at for c in session.exec(select(PortfolioCloseRow))}
    assert stored == expected
    assert len(expected) == 2 * 4  # two agents, marks over four UTC days: the test is not vacuous
