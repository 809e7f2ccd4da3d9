"""Builders of valid rows for storage tests: a cohort with two agents, a market and a round."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine, event
from sqlmodel import Session

from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    MarketRow,
    PositionRow,
    RoundRow,
)

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class World:
    cohort_id: str
    agent_ids: tuple[int, int]
    market_id: str
    round_id: int


def market(market_id: str = "polymarket:123") -> MarketRow:
    venue, venue_id = market_id.split(":", 1)
    return MarketRow(
        id=market_id,
        venue=venue,
        venue_id=venue_id,
        question="Will it rain?",
        outcomes_json=["YES", "NO"],
        first_seen_at=T0,
        updated_at=T0,
    )


def cohort(cohort_id: str) -> CohortRow:
    return CohortRow(
        id=cohort_id,
        name=cohort_id,
        mode="replay",
        status="running",
        config_json={},
        config_hash="h",
        created_at=T0,
    )


def build_world(engine: Engine, cohort_id: str = "c1", market_id: str = "polymarket:123") -> World:
    """Insert a cohort, agents ``a`` and ``b``, a market and round 0; return their keys."""
    with session_scope(engine) as session:
        session.add(cohort(cohort_id))
        if session.get(MarketRow, market_id) is None:
            session.add(market(market_id))
        session.flush()
        agents = [AgentRow(cohort_id=cohort_id, name=n, kind="baseline", created_at=T0) for n in ("a", "b")]
        rnd = RoundRow(cohort_id=cohort_id, round_index=0, scheduled_at=T0, status="open")
        session.add_all([*agents, rnd])
        session.flush()
        assert agents[0].id is not None and agents[1].id is not None and rnd.id is not None
        return World(cohort_id, (agents[0].id, agents[1].id), market_id, rnd.id)


def decision(world: World, agent: int = 0, **overrides: Any) -> DecisionRow:
    values: dict[str, Any] = {
        "round_id": world.round_id,
        "agent_id": world.agent_ids[agent],
        "cohort_id": world.cohort_id,
        "claim_token": "tok",
        "status": "done",
        "claimed_at": T0,
    }
    return DecisionRow(**(values | overrides))


def added_decision(session: Session, world: World, agent: int = 0) -> int:
    """Add a ``decision`` row to ``session`` and flush it: its id, for the fills or traces naming it."""
    row = decision(world, agent)
    session.add(row)
    session.flush()
    assert row.id is not None
    return row.id


def position(world: World, position_id: str = "p1", agent: int = 0, **overrides: Any) -> PositionRow:
    values: dict[str, Any] = {
        "agent_id": world.agent_ids[agent],
        "position_id": position_id,
        "market_id": world.market_id,
        "outcome": "YES",
        "shares": Decimal("1250"),
        "cost_basis": Decimal("500"),
        "opened_at": T0,
        "updated_at": T0,
    }
    return PositionRow(**(values | overrides))


def buy(
    world: World, decision_id: int, leg_index: int = 0, position_id: str = "p1", **overrides: Any
) -> FillRow:
    values: dict[str, Any] = {
        "decision_id": decision_id,
        "leg_index": leg_index,
        "agent_id": world.agent_ids[0],
        "market_id": world.market_id,
        "outcome": "YES",
        "position_id": position_id,
        "kind": "buy",
        "amount": Decimal("500"),
        "price": Decimal("0.4"),
        "shares": Decimal("1250"),
        "filled_at": T0 + timedelta(minutes=1),
    }
    return FillRow(**(values | overrides))


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """The statements ``engine`` sends to the driver while the block runs."""
    sent: list[str] = []

    def record(*args: object) -> None:
        sent.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)
