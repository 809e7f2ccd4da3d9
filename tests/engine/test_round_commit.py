"""A round phase is stored in one transaction for all its agents, yet each agent keeps its own
fence: a claim taken over by another runner is left to it, a ledger another writer moved gets its
decision recorded as a conflict, the other agents' decisions are stored; and a failure anywhere in
the phase stores nothing at all."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, update
from sqlmodel import Session, col, select

from agents.types import Decision
from arena.db.engine import session_scope
from arena.db.models import DecisionRow, FillRow
from arena.engine.rounds import commit as round_commit
from arena.engine.rounds import run as rounds
from arena.engine.rounds.commit import Pending, Stored
from arena.engine.rounds.decisions import execute
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.runtime.quotes import build_quotes
from arena.engine.store import ledger_store
from arena.engine.store.claims import new_token
from arena.engine.store.ledger_store import lock_and_check, write_fills
from markets.replay import ReplaySource
from portfolio import Bet, MarketId, Money
from tests.db.waits import engine_waits
from tests.engine.helpers import config, day, launch_cohort, runtime, tiny_dataset

AGENTS = [{"name": n, "kind": "favorite"} for n in ("a", "b", "c")]


def _setup(engine: Engine, tmp_path: Path) -> tuple[CohortRuntime, ReplaySource, str]:
    cohort_id, source = launch_cohort(engine, config(tiny_dataset(tmp_path / "d"), AGENTS))
    return runtime(engine, cohort_id, source), source, cohort_id


def _rows(engine: Engine, agent_id: int) -> tuple[DecisionRow, int]:
    with Session(engine) as session:
        decision = session.exec(select(DecisionRow).where(DecisionRow.agent_id == agent_id)).one()
        fills = session.exec(select(FillRow).where(FillRow.agent_id == agent_id)).all()
    return decision, len(fills)


def _other_writer_bets(
    engine: Engine, source: ReplaySource, cohort_id: str, agent_id: int, decision_id: int
) -> None:
    """Another process executes a real bet on the agent's ledger and commits it."""
    other = runtime(engine, cohort_id, source)
    book = other.slot(agent_id).book
    entry = source.snapshot(day(0)).entries[0]
    quotes = build_quotes(
        other.config.fills,
        [(entry.market, entry.price)],
        venue_of={entry.market.market_id: entry.market.venue},
    )
    bet = Bet(MarketId(entry.market.market_id), "YES", Money(Decimal(100)))
    outcome = execute(book.ledger, Decision(actions=(bet,)), quotes, day(0), decision_id=str(decision_id))
    with session_scope(engine) as session:
        lock_and_check(session, [book])
        write_fills(session, book, outcome.fills, decision_id=decision_id, at=day(0))


def test_one_transaction_keeps_each_agents_claim_and_ledger_fence(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, source, cohort_id = _setup(engine, tmp_path)
    a, b, c = (rt.agents[i].id for i in range(3))
    real = round_commit.store_phase

    def interfered(session: Session, pending: Sequence[Pending], **kwargs: Any) -> Stored:
        ids = {p.slot.id: p.claim.decision_id for p in pending}
        with session_scope(engine) as other:  # another runner took a's expired claim over
            other.execute(
                update(DecisionRow).where(col(DecisionRow.id) == ids[a]).values(claim_token="elsewhere:1:x")
            )
        _other_writer_bets(engine, source, cohort_id, b, ids[b])
        return real(session, pending, **kwargs)

    monkeypatch.setattr(rounds, "store_phase", interfered)
    asyncio.run(rounds.run_round(rt, 0, day(0)))

    decision_a, fills_a = _rows(engine, a)
    assert (decision_a.status, decision_a.claim_token, fills_a) == ("claimed", "elsewhere:1:x", 0)
    decision_b, fills_b = _rows(engine, b)
    assert (decision_b.status, decision_b.error_kind, fills_b) == ("error", "ledger_conflict", 1)
    decision_c, fills_c = _rows(engine, c)
    assert decision_c.status == "done" and fills_c > 0
    assert [rt.slot(x).book.fill_count for x in (a, b, c)] == [0, 1, fills_c]  # ledgers match the database
    with Session(engine) as session:
        assert ledger_store.reconcile(session, rt.rules, [a, b, c]) == []


def test_a_failure_inside_the_phase_stores_no_agents_decision(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, _, _ = _setup(engine, tmp_path)
    real = round_commit.write_fill_batches

    def crash_after_writing(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        raise RuntimeError("the process died mid-commit")

    monkeypatch.setattr(round_commit, "write_fill_batches", crash_after_writing)
    with pytest.raises(RuntimeError, match="died mid-commit"):
        asyncio.run(rounds.run_round(rt, 0, day(0)))
    for slot in rt.agents:
        decision, fills = _rows(engine, slot.id)
        assert (decision.status, fills) == ("claimed", 0)
        assert slot.book.fill_count == 0 and not slot.book.ledger.open_positions()
    monkeypatch.undo()
    rt.lease = timedelta(microseconds=1)  # the failed run's claims have expired: a re-run takes them over
    report = asyncio.run(rounds.run_round(rt, 0, day(0)))
    assert report.status == "done" and all(_rows(engine, s.id)[1] > 0 for s in rt.agents)


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite is in the process: no round trips
def test_a_round_phase_waits_for_postgresql_three_times(engine: Engine, tmp_path: Path) -> None:
    """The claims' read is sent ahead (``pipeline.read_later``) and answered with the ledger
    fence's lock and count, in one wait; the decisions' UPDATE, whose rows that read locked, is
    not counted and goes with the COMMIT."""
    rt, _, _ = _setup(engine, tmp_path)
    full, universe = rounds.round_snapshot(rt, day(0))
    with session_scope(rt.engine) as session:
        round_id, claims = rounds.open_and_claim(session, rt, 0, day(0), universe, new_token())
    plan = rounds.RoundPlan(rt, 0, day(0), round_id, full, universe)
    answers = asyncio.run(plan.ask(rt.agents, time.monotonic() + 60, None, claims.claimed))  # loop's clock
    with engine_waits(engine, tmp_path / "trace") as found:
        statuses = plan.commit_phase(rt.agents, claims.claimed, answers)
    # psycopg's BEGIN (in a pipeline, it waits for it); the claims, the lock and the count; the
    # writes with the COMMIT. Before: the claims, the fence and the UPDATE's count waited apart.
    assert found == ["Sync", "Sync", "Sync"]
    assert set(statuses.values()) == {"done"}
    for slot in rt.agents:
        decision, fills = _rows(engine, slot.id)
        assert decision.status == "done" and fills == slot.book.fill_count > 0
