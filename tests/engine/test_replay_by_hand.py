"""End-to-end replay of a tiny scripted cohort, every number worked out by hand.

Dataset (tests.engine.helpers.tiny_dataset): A 0.40 → 0.50 (day 7) → 0.60 (day 14), YES on day 19;
B 0.25 → 0.20 (day 7), NO on day 9; C 0.50 → 0.80 (day 7), VOID on day 17.
Rounds on days 0 and 7, marks daily. Agent "alice" (scripted):

day 0 (cash 10,000, max bet 2,500): $500 YES on A at 0.40 = 1,250 shares; $1,000 NO on B at
0.75 = 1,333.333333 shares (truncated to the micro-share); $200 YES on C at 0.50 = 400 shares.
Cash 8,300. Stated P(A = YES) = 0.7.
day 7 (cash 8,300, max bet 2,075): sell 50% of A YES at 0.50: 625 shares for 312.50, releasing
250 of cost, realised +62.50; $100 NO on A at 0.50 = 200 shares. Cash 8,512.50.
day 9, B resolves NO: 1,333.333333 shares pay 1,333.333333, realised +333.333333. Cash 9,845.833333.
day 17, C is void: the 200 cost basis is refunded, realised 0. Cash 10,045.833333.
day 19, A resolves YES: 625 YES shares pay 625 (realised +375), 200 NO shares pay 0 (realised
-100). Cash 10,670.833333 = the final value. P/L +670.833333 = 62.50 + 333.333333 + 0 + 375 - 100.

Agent "bob" bets $300 YES on A on day 0 (750 shares), then on day 7 sells it and bets on it again
in one decision, which the rules refuse: the decision is stored as rejected with the reason, and
bob holds. A pays 750: final cash 10,450.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.db.models import (
    CohortRow,
    DecisionRow,
    FillRow,
    PortfolioSnapshotRow,
    PositionRow,
    RoundMarketRow,
    RoundRow,
)
from arena.engine.store.ledger_store import load_books, reconcile
from arena.scoring import load_frames, scored_bets
from tests.engine.helpers import A, B, C, config, day, replay, script, tiny_dataset

D = Decimal


@pytest.fixture
def replayed(engine: Engine, tmp_path: Path):  # type: ignore[no-untyped-def]
    dataset = tiny_dataset(tmp_path / "data")
    lines = [
        {"time": day(0).isoformat(), "market_id": A, "outcome": "YES", "amount": 500, "probability": 0.7},
        {"time": day(0).isoformat(), "market_id": B, "outcome": "NO", "amount": 1000},
        {"time": day(0).isoformat(), "market_id": C, "outcome": "YES", "amount": 200},
        {"time": day(7).isoformat(), "position_id": f"{A}|YES|1", "percent": 50},
        {"time": day(7).isoformat(), "market_id": A, "outcome": "NO", "amount": 100},
    ]
    bob_lines = [
        {"time": day(0).isoformat(), "market_id": A, "outcome": "YES", "amount": 300},
        {"time": day(7).isoformat(), "position_id": f"{A}|YES|1", "percent": 100},
        {"time": day(7).isoformat(), "market_id": A, "outcome": "YES", "amount": 50},
    ]
    alice = {"name": "alice", "kind": "scripted", "path": str(script(tmp_path / "alice.jsonl", lines))}
    bob = {"name": "bob", "kind": "scripted", "path": str(script(tmp_path / "bob.jsonl", bob_lines))}
    result, rt = replay(engine, config(dataset, [alice, {"name": "holder", "kind": "hold"}, bob]))
    return result, rt


def _snapshots(engine: Engine, agent_id: int) -> dict[int, PortfolioSnapshotRow]:
    with Session(engine) as session:
        rows = session.exec(
            select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.agent_id == agent_id)
        ).all()
    return {(r.marked_at - day(0)).days: r for r in rows}


def test_final_cash_positions_and_pnl(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    result, rt = replayed
    assert result.completed and result.end == day(19)
    alice, holder, bob = rt.agents
    assert alice.book.ledger.cash == D("10670.833333")
    assert alice.book.ledger.realized_pnl == D("670.833333")
    assert holder.book.ledger.cash == D("10000")
    assert bob.book.ledger.cash == D("10450")
    with Session(engine) as session:
        positions = {
            p.position_id: p
            for p in session.exec(select(PositionRow).where(PositionRow.agent_id == alice.id))
        }
        assert session.get(CohortRow, rt.cohort_id).status == "completed"  # type: ignore[union-attr]
    assert {p: (r.status, r.shares, r.cost_basis, r.realized_pnl) for p, r in positions.items()} == {
        f"{A}|YES|1": ("settled", D("0"), D("0"), D("437.5")),  # 62.50 from the sell + 375 at settlement
        f"{A}|NO|1": ("settled", D("0"), D("0"), D("-100")),
        f"{B}|NO|1": ("settled", D("0"), D("0"), D("333.333333")),
        f"{C}|YES|1": ("settled", D("0"), D("0"), D("0")),
    }


def test_fill_log(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    _, rt = replayed
    alice = rt.agents[0]
    with Session(engine) as session:
        fills = session.exec(
            select(FillRow).where(FillRow.agent_id == alice.id).order_by(col(FillRow.id))
        ).all()
    got = [
        (f.kind, f.market_id, f.outcome, f.amount, f.price, f.shares, f.realized_pnl, f.max_bet, f.filled_at)
        for f in fills
    ]
    assert got == [
        ("buy", A, "YES", D("500"), D("0.4"), D("1250"), D("0"), D("2500"), day(0)),
        ("buy", B, "NO", D("1000"), D("0.75"), D("1333.333333"), D("0"), D("2500"), day(0)),
        ("buy", C, "YES", D("200"), D("0.5"), D("400"), D("0"), D("2500"), day(0)),
        ("sell", A, "YES", D("312.5"), D("0.5"), D("625"), D("62.5"), None, day(7)),
        ("buy", A, "NO", D("100"), D("0.5"), D("200"), D("0"), D("2075"), day(7)),
        ("settle", B, "NO", D("1333.333333"), D("1"), D("1333.333333"), D("333.333333"), None, day(9)),
        ("settle", C, "YES", D("200"), None, D("400"), D("0"), None, day(17)),
        ("settle", A, "YES", D("625"), D("1"), D("625"), D("375"), None, day(19)),
        ("settle", A, "NO", D("0"), D("0"), D("200"), D("-100"), None, day(19)),
    ]


def test_daily_marks(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    _, rt = replayed
    marks = _snapshots(engine, rt.agents[0].id)
    assert sorted(marks) == list(range(20))  # days 0..19: the cohort completes on day 19
    # day 0: A 1,250 × 0.40 + B 1,333.333333 × 0.75 (999.999999, truncated) + C 400 × 0.50
    assert (marks[0].cash, marks[0].positions_value) == (D("8300"), D("1699.999999"))
    assert marks[0].unrealized_pnl == D("-0.000001")
    # day 7: A YES 625 × 0.50 + A NO 200 × 0.50 + B 1,333.333333 × 0.80 + C 400 × 0.80; realised 62.50
    assert (marks[7].cash, marks[7].positions_value) == (
        D("8512.5"),
        D("312.5") + D("100") + D("1066.666666") + D("320"),
    )
    assert (marks[7].realized_pnl, marks[7].total_value) == (D("62.5"), D("10311.666666"))
    # day 14: B settled; A YES 625 × 0.60, A NO 200 × 0.40; C at its day-7 price (7 days old: not stale)
    assert (marks[14].cash, marks[14].positions_value) == (D("9845.833333"), D("375") + D("80") + D("320"))
    assert (marks[14].total_value, marks[14].stale_count) == (D("10620.833333"), 0)
    # day 15: C has had no price for 8 days: carried forward, flagged stale
    assert (marks[15].total_value, marks[15].stale_count) == (D("10620.833333"), 1)
    assert (marks[19].cash, marks[19].total_value, marks[19].open_positions) == (
        D("10670.833333"),
        D("10670.833333"),
        0,
    )
    assert marks[19].total_value - D("10000") == marks[19].realized_pnl + marks[19].unrealized_pnl


def test_decisions_rounds_and_snapshots(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        decisions = session.exec(
            select(DecisionRow).order_by(col(DecisionRow.round_id), col(DecisionRow.agent_id))
        ).all()
        rounds = session.exec(select(RoundRow).order_by(col(RoundRow.round_index))).all()
        offered = session.exec(
            select(RoundMarketRow.round_id, RoundMarketRow.market_id, RoundMarketRow.prices_json)
        ).all()
    assert [(d.status, d.cash_at_start, d.max_bet) for d in decisions] == [
        ("done", D("10000"), D("2500")),
        ("done", D("10000"), D("2500")),
        ("done", D("10000"), D("2500")),
        ("done", D("8300"), D("2075")),
        ("done", D("10000"), D("2500")),
        ("rejected", D("9700"), D("2425")),
    ]
    rejected = decisions[-1]
    assert rejected.error_kind == "invalid_actions" and "which leg 1 sells" in (rejected.error or "")
    assert len(rejected.actions_json) == 2  # what the agent asked for is kept beside the reason
    assert decisions[0].probabilities_json == {A: {"YES": 0.7}}
    assert decisions[0].actions_json[0] == {"type": "bet", "market_id": A, "outcome": "YES", "amount": "500"}
    assert [(r.round_index, r.status, r.market_count, r.scheduled_at) for r in rounds] == [
        (0, "done", 3, day(0)),
        (1, "done", 3, day(7)),
    ]
    assert (
        all(len(r.snapshot_hash or "") == 64 for r in rounds)
        and rounds[0].snapshot_hash != rounds[1].snapshot_hash
    )
    day7 = {m: p for r, m, p in offered if r == rounds[1].id}
    assert day7[B] == {"YES": "0.20", "NO": "0.80"}


def test_brier_from_the_stored_log(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    _, rt = replayed
    bets = scored_bets(load_frames(engine, [rt.cohort_id])).sort("filled_at", "market_id", "confidence")
    rows = [(r["market_id"], r["confidence"], r["brier"]) for r in bets.iter_rows(named=True)]
    # confidence = amount / max bet; Brier = (confidence - [side won])^2; C is void: not scored
    # (bob's one bet: $300 of 2,500 YES on A, won)
    a_no = 100 / 2075  # alice's NO on A lost: (c - 0)^2
    assert rows == [
        (C, pytest.approx(0.08), None),
        (A, pytest.approx(0.12), pytest.approx((0.12 - 1) ** 2)),
        (A, pytest.approx(0.2), pytest.approx((0.2 - 1) ** 2)),
        (B, pytest.approx(0.4), pytest.approx((0.4 - 1) ** 2)),
        (A, pytest.approx(a_no), pytest.approx(a_no**2)),
    ]


def test_ledger_replays_from_fills_and_caches_reconcile(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    _, rt = replayed
    ids = [s.id for s in rt.agents]
    with Session(engine) as session:
        books = load_books(session, rt.rules, ids)
        assert reconcile(session, rt.rules, ids) == []
    for slot in rt.agents:
        assert books[slot.id].ledger.cash == slot.book.ledger.cash
        assert books[slot.id].ledger.positions.keys() == slot.book.ledger.positions.keys()


def test_a_second_replay_of_the_same_cohort_changes_nothing(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from arena.engine.replay.runner import ReplayRunner
    from tests.engine.helpers import runtime

    _, rt = replayed
    with Session(engine) as session:
        before = session.exec(select(FillRow.id)).all(), session.exec(select(PortfolioSnapshotRow.id)).all()
    session_rt = runtime(engine, rt.cohort_id, rt.source)  # type: ignore[arg-type]
    asyncio.run(ReplayRunner(session_rt).run())
    with Session(engine) as session:
        after = session.exec(select(FillRow.id)).all(), session.exec(select(PortfolioSnapshotRow.id)).all()
    assert after == before


def test_reconcile_finds_a_cache_that_disagrees_with_the_fill_log(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import update

    from arena.db.engine import session_scope

    _, rt = replayed
    alice = rt.agents[0].id
    with session_scope(engine) as session:
        session.execute(
            update(PositionRow)
            .where(col(PositionRow.agent_id) == alice, col(PositionRow.position_id) == f"{B}|NO|1")
            .values(realized_pnl=D("333.343333"))
        )
        session.execute(
            update(PortfolioSnapshotRow)
            .where(col(PortfolioSnapshotRow.agent_id) == alice, col(PortfolioSnapshotRow.marked_at) == day(3))
            .values(cash=D("8300.01"))
        )
    with Session(engine) as session:
        problems = reconcile(session, rt.rules, [alice])
    assert len(problems) == 2
    assert f"position {B}|NO|1 cached" in problems[0] and "333.343333" in problems[0]
    assert "snapshot at 2025-01-04T00:00:00+00:00 has cash 8300.010000" in problems[1]
