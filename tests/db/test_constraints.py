"""Idempotency and consistency live in the schema: duplicates and mismatched rows are refused."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel

from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    FillRow,
    MarketSnapshotRow,
    PortfolioSnapshotRow,
    PositionRow,
    ResolutionRow,
    RoundRow,
)
from tests.db.rows import T0, World, added_decision, build_world, buy, decision, position


@dataclass(frozen=True)
class Book:
    """A world with one decision of agent ``a`` that bought into open position ``p1``."""

    world: World
    decision_id: int


@pytest.fixture
def book(engine: Engine) -> Book:
    world = build_world(engine)
    with session_scope(engine) as session:
        session.add(position(world))
        decision_id = added_decision(session, world)
        session.add(buy(world, decision_id))
    return Book(world, decision_id)


def _commit(engine: Engine, *rows: SQLModel) -> None:
    with session_scope(engine) as session:
        session.add_all(rows)


def settle(world: World) -> FillRow:
    return FillRow(
        agent_id=world.agent_ids[0],
        market_id=world.market_id,
        outcome="YES",
        position_id="p1",
        kind="settle",
        amount=Decimal("1250"),
        price=Decimal(1),
        shares=Decimal("1250"),
        filled_at=T0 + timedelta(days=3),
    )


def mark(world: World) -> PortfolioSnapshotRow:
    zero = Decimal(0)
    return PortfolioSnapshotRow(
        agent_id=world.agent_ids[0],
        cohort_id=world.cohort_id,
        marked_at=T0,
        cash=Decimal("9500"),
        positions_value=Decimal("500"),
        total_value=Decimal("10000"),
        realized_pnl=zero,
        unrealized_pnl=zero,
    )


# Each builds a new row whose key the schema allows once: the second insert must fail.
ONCE: dict[str, Callable[[Book], SQLModel]] = {
    "agent name per cohort": lambda b: AgentRow(
        cohort_id=b.world.cohort_id, name="c", kind="x", created_at=T0
    ),
    "round index per cohort": lambda b: RoundRow(
        cohort_id=b.world.cohort_id, round_index=1, scheduled_at=T0, status="open"
    ),
    "decision per round and agent": lambda b: decision(b.world, agent=1),
    "fill per decision leg": lambda b: buy(b.world, b.decision_id, leg_index=1),
    "settlement per position": lambda b: settle(b.world),
    "portfolio snapshot per agent and time": lambda b: mark(b.world),
    "market snapshot per market, source and time": lambda b: MarketSnapshotRow(
        market_id=b.world.market_id, source="clob", observed_at=T0, prices_json={"YES": "0.4"}
    ),
    "resolution per market": lambda b: ResolutionRow(
        market_id=b.world.market_id, kind="YES", payouts_json={"YES": "1"}, resolved_at=T0, detected_at=T0
    ),
}


@pytest.mark.parametrize("case", list(ONCE))
def test_a_duplicate_is_refused(engine: Engine, book: Book, case: str) -> None:
    _commit(engine, ONCE[case](book))
    with pytest.raises(IntegrityError):
        _commit(engine, ONCE[case](book))


def test_same_names_and_times_are_fine_in_other_scopes(engine: Engine, book: Book) -> None:
    other = build_world(engine, cohort_id="c2", market_id=book.world.market_id)  # agents "a", "b" again
    snap = MarketSnapshotRow(market_id=other.market_id, source="clob", observed_at=T0, prices_json={})
    gamma = MarketSnapshotRow(market_id=other.market_id, source="gamma", observed_at=T0, prices_json={})
    _commit(engine, snap, gamma, mark(book.world), mark(other))


def test_only_one_open_position_per_outcome_but_reopening_makes_a_new_row(engine: Engine, book: Book) -> None:
    world = book.world
    with pytest.raises(IntegrityError):
        _commit(engine, position(world, "p2"))
    with session_scope(engine) as session:
        old = session.get(PositionRow, (world.agent_ids[0], "p1"))
        assert old is not None
        old.status, old.shares, old.closed_at = "closed", Decimal(0), T0
    _commit(engine, position(world, "p2"))  # reopened after a full sell
    _commit(engine, position(world, "p3", outcome="NO"))  # the other side is another position


def test_a_decision_cannot_mix_cohorts(engine: Engine, book: Book) -> None:
    other = build_world(engine, cohort_id="c2", market_id=book.world.market_id)
    # Round of cohort c1, agent of cohort c2: refused whichever cohort the row claims.
    for cohort_id in ("c1", "c2"):
        with pytest.raises(IntegrityError):
            _commit(engine, decision(book.world, agent_id=other.agent_ids[1], cohort_id=cohort_id))


def test_a_fill_must_agree_with_its_position_and_decision(engine: Engine, book: Book) -> None:
    world = book.world
    wrong = {
        "outcome differs from position": buy(world, book.decision_id, leg_index=1, outcome="NO"),
        "unknown position": buy(world, book.decision_id, leg_index=1, position_id="nope"),
        "decision of another agent": buy(world, book.decision_id, leg_index=1, agent_id=world.agent_ids[1]),
        "buy without decision": buy(world, None, leg_index=None),  # type: ignore[arg-type]
        "buy without price": buy(world, book.decision_id, leg_index=1, price=None),
        "settlement with a decision": buy(world, book.decision_id, leg_index=1, kind="settle"),
        "unknown kind": buy(world, book.decision_id, leg_index=1, kind="gift"),
        "negative amount": buy(world, book.decision_id, leg_index=1, amount=Decimal("-1")),
    }
    for name, fill in wrong.items():
        with pytest.raises(IntegrityError):  # noqa: PT012 - the fail names the case the database accepted
            _commit(engine, fill)
            pytest.fail(f"accepted: {name}")


def test_rows_of_one_unit_of_work_may_be_added_in_any_order(engine: Engine) -> None:
    world = build_world(engine)
    with session_scope(engine) as session:
        decision_id = added_decision(session, world)
        # The fill goes in before its position: foreign keys are checked at commit.
        session.add(buy(world, decision_id))
        session.add(position(world))
