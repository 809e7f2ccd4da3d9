"""Closed is closed: a market past its close time is not offered, bought or sold, but its
positions are still marked and settle when it resolves, whether or not the source serving the
round knew the close (live or replay, the engine checks it). Every number worked out by hand.

Dataset (YES price by day; a price stamped day d is usable from day d):
- A closes on day 5 and resolves YES on day 12: 0.40 (day 0), 0.90 (day 6: after the close).
- B has no close time and resolves NO on day 12: 0.30 (day 0), 0.25 (day 7).
Rounds on days 0 and 7, marks daily.

- alice bets $500 YES on A on day 0 at 0.40 (1,250 shares, cash 9,500), then on day 7 tries to
  sell half of it: refused, A closed on day 5. Her position is marked at 0.90 from day 6
  (value 9,500 + 1,125 = 10,625) and pays 1,250 on day 12: final cash 10,750.
- carol tries $100 YES on A on day 7: refused for the same reason; she holds.
- dave bets $100 NO on B on day 7 at 0.75 (133.333333 shares): B has no close, so it is offered
  until it resolves; NO wins: final cash 10,033.333333.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.db.models import AgentRow, DecisionRow, FillRow, PortfolioSnapshotRow, RoundMarketRow, RoundRow
from arena.engine.replay.runner import ReplayResult, ReplayRunner
from arena.engine.runtime.cohort import CohortRuntime
from markets.types import ResolutionKind
from tests.engine.helpers import config, day, launch_cohort, runtime, script, write_market_dataset
from tests.markets.ignores_closes import IgnoresCloses

D = Decimal
A, B = "polymarket:a", "polymarket:b"
CLOSED_ON_DAY_5 = "market 'polymarket:a' closed at 2025-01-06T00:00:00+00:00: a closed market is not traded"


@pytest.fixture(params=["honest", "ignores-closes"])
def replayed(
    engine: Engine, tmp_path: Path, request: pytest.FixtureRequest
) -> tuple[ReplayResult, CohortRuntime]:
    dataset = write_market_dataset(
        tmp_path / "data",
        {A: {0: "0.40", 6: "0.90"}, B: {0: "0.30", 7: "0.25"}},
        {A: (12, ResolutionKind.YES), B: (12, ResolutionKind.NO)},
        close_days={A: 5},
    )
    t0, t7 = day(0).isoformat(), day(7).isoformat()
    lines = {
        "alice": [
            {"time": t0, "market_id": A, "outcome": "YES", "amount": 500},
            {"time": t7, "position_id": f"{A}|YES|1", "percent": 50},
        ],
        "carol": [{"time": t7, "market_id": A, "outcome": "YES", "amount": 100}],
        "dave": [{"time": t7, "market_id": B, "outcome": "NO", "amount": 100}],
    }
    agents = [
        {"name": name, "kind": "scripted", "path": str(script(tmp_path / f"{name}.jsonl", found))}
        for name, found in lines.items()
    ]
    cohort_id, source = launch_cohort(engine, config(dataset, agents))
    served = source if request.param == "honest" else IgnoresCloses(source)
    rt = runtime(engine, cohort_id, served)  # type: ignore[arg-type]
    return asyncio.run(ReplayRunner(rt).run()), rt


def test_a_closed_market_is_not_offered_after_its_close(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        offered = session.exec(
            select(RoundRow.round_index, RoundMarketRow.market_id)
            .join(RoundMarketRow, col(RoundMarketRow.round_id) == col(RoundRow.id))
            .order_by(col(RoundRow.round_index), col(RoundMarketRow.market_id))
        ).all()
    assert [tuple(row) for row in offered] == [(0, A), (0, B), (1, B)]


def test_trading_a_closed_market_is_refused_naming_the_close(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        rows = session.exec(
            select(AgentRow.name, RoundRow.round_index, DecisionRow.status, DecisionRow.error)
            .join(AgentRow, col(AgentRow.id) == col(DecisionRow.agent_id))
            .join(RoundRow, col(RoundRow.id) == col(DecisionRow.round_id))
            .where(col(RoundRow.round_index) == 1)
            .order_by(col(AgentRow.name))
        ).all()
    by_agent = {name: (status, error) for name, _, status, error in rows}
    assert by_agent["alice"][0] == by_agent["carol"][0] == "rejected"
    sell, bet = f"sell 50% of position '{A}|YES|1'", f"bet $100.00 on 'YES' of '{A}'"
    assert by_agent["alice"][1].startswith(f"decision rejected: leg 1 ({sell}): {CLOSED_ON_DAY_5}")
    assert by_agent["carol"][1].startswith(f"decision rejected: leg 1 ({bet}): {CLOSED_ON_DAY_5}")
    assert by_agent["dave"] == ("done", None)


def test_no_fill_after_the_close_yet_marks_and_settlement_go_on(replayed, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    result, rt = replayed
    assert result.completed
    alice, carol, dave = rt.agents
    with Session(engine) as session:
        fills = session.exec(select(FillRow).order_by(col(FillRow.id))).all()
        marks = session.exec(
            select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.agent_id == alice.id)
        ).all()
    trades = [(f.agent_id, f.kind, f.market_id, f.filled_at) for f in fills if f.kind != "settle"]
    assert trades == [(alice.id, "buy", A, day(0)), (dave.id, "buy", B, day(7))]
    value = {(m.marked_at - day(0)).days: m.total_value for m in marks}
    assert (value[5], value[6], value[7]) == (D("10000"), D("10625"), D("10625"))  # 1,250 × 0.90 from day 6
    assert alice.book.ledger.cash == D("10750")
    assert carol.book.ledger.cash == D("10000")
    assert dave.book.ledger.cash == D("10033.333333")
