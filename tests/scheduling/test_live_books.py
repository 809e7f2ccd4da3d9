"""A live cohort's books reconcile when time really passes: the round is asked minutes after its
scheduled time, its agents answer at different times, and a mark is taken between the answers
and the fills. Each decision keeps its own answer time, the fills are stamped when they executed,
and every stored mark agrees with the fills up to its time (``arena cohort reconcile`` exits 0).
The jobs run in-process through ``run_once``, as ``arena serve`` runs them, on a clock that
moves forward at every reading."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from agents.types import Decision
from arena.cli import app
from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.core.settings import Settings
from arena.db.engine import session_scope
from arena.db.models import DecisionRow, FillRow, JobRunRow, PortfolioSnapshotRow, RoundRow, WorkUnitRow
from arena.engine.live import jobs as live
from arena.engine.rounds import run as rounds
from arena.engine.rounds.decisions import execute
from arena.engine.runtime.cohort import load_runtime
from arena.engine.runtime.quotes import build_quotes
from arena.engine.runtime.sources import open_source
from arena.engine.store.claims import new_token
from arena.engine.store.ledger_store import lock_and_check, write_fills
from arena.scheduling.jobs import job_specs
from arena.scheduling.planner import plan_round
from arena.scheduling.runs import run_once
from portfolio import Bet, MarketId, Money
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.polymarket_server import FakePolymarket

START = datetime(2026, 8, 21, tzinfo=UTC)
JOBS = job_specs(Settings())


class TickingClock(SimulatedClock):
    """A simulated clock that moves ``step`` forward each time it is read: no two readings agree,
    as on a real clock, and the order of the readings is the order of the events."""

    def __init__(self, start: datetime, step: timedelta = timedelta(milliseconds=250)) -> None:
        super().__init__(start)
        self.step = step

    def now(self) -> datetime:
        current = super().now()
        self.advance(self.step)
        return current


BASELINES = [
    {"name": "fav", "kind": "favorite"},
    {"name": "mkt", "kind": "market"},
    {"name": "rnd", "kind": "random"},
]
HOLD = json.dumps({"reasoning": "nothing worth it", "actions": [], "probabilities": {}})


def _launch(engine: Engine, clock: SimulatedClock, agents: list[dict[str, Any]] = BASELINES) -> str:
    config = parse_config(
        {
            "name": "books",
            "mode": "live",
            "venue": "polymarket",
            "start": START.isoformat(),
            "marks": {"every": "1m"},
            "tournament": {"hidden_fraction": 0},  # prices shown from the first round: bets
            "schedule": {"every": "1d", "rounds": 2},
            "agents": agents,
        }
    )
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def _reconcile(engine: Engine, cohort: str) -> Any:
    url = engine.url.render_as_string(hide_password=False)
    return CliRunner().invoke(app, ["cohort", "reconcile", cohort, "--database-url", url])


def test_a_mark_between_the_answers_and_the_fills_agrees_with_the_fill_log(
    engine: Engine, fake: FakePolymarket, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = TickingClock(START - timedelta(minutes=5))  # the sync before round 0's time
    cohort = _launch(engine, clock)
    assert run_once(JOBS["sync"], engine, clock)
    clock.set(START + timedelta(minutes=7, seconds=20))  # the round is found 7 minutes late
    marked_between: list[datetime] = []
    real_ask_all = rounds.ask_all

    async def answers_then_a_mark(*args: Any, **kwargs: Any) -> Any:
        answers = await real_ask_all(*args, **kwargs)
        before = clock.now()
        await asyncio.to_thread(run_once, JOBS["marks"], engine, clock)  # while the round waits
        marked_between.append(before)
        return answers

    monkeypatch.setattr(rounds, "ask_all", answers_then_a_mark)
    assert run_once(JOBS["rounds"], engine, clock)
    monkeypatch.undo()
    clock.advance(timedelta(minutes=1))
    assert run_once(JOBS["marks"], engine, clock)

    with Session(engine) as session:
        (round_0,) = session.exec(select(RoundRow).where(RoundRow.cohort_id == cohort)).all()
        decisions = session.exec(select(DecisionRow).where(DecisionRow.round_id == round_0.id)).all()
        fills = session.exec(select(FillRow).order_by(col(FillRow.id))).all()
        marks = session.exec(select(PortfolioSnapshotRow).order_by(col(PortfolioSnapshotRow.marked_at))).all()
    assert round_0.scheduled_at == START and round_0.status == "done"
    assert round_0.started_at is not None and round_0.finished_at is not None
    answered = sorted(d.decided_at for d in decisions if d.decided_at is not None)
    assert len(answered) == 3 and len(set(answered)) == 3  # each agent's own answer time
    assert round_0.started_at < answered[0]
    assert fills and {f.kind for f in fills} == {"buy"}
    filled = {f.filled_at for f in fills}
    assert len(filled) == 1  # one phase, one execution time
    (filled_at,) = filled
    (between,) = marked_between
    in_between = [m for m in marks if m.marked_at < filled_at]
    assert answered[-1] < between < filled_at <= round_0.finished_at
    # The mark taken between the answers and the fills values the portfolios without them...
    assert len(in_between) == 3 and {m.cash for m in in_between} == {Decimal(10_000)}
    # ...and the next one with them; the fills are not stamped with the round's scheduled time.
    later = [m for m in marks if m.marked_at > filled_at]
    assert len(later) == 3 and min(m.cash for m in later) < Decimal(10_000)
    result = _reconcile(engine, cohort)
    assert result.exit_code == 0, result.output
    assert "3 ledgers agree with their fill logs" in result.output


def test_a_mark_refused_by_fills_committed_meanwhile_reads_the_ledgers_again(
    engine: Engine, fake: FakePolymarket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process commits a bet after the marks job read the ledgers and before it wrote: the
    write is refused (its ledgers are stale), and the mark is taken again with the bet in it."""
    clock = TickingClock(START - timedelta(minutes=5))
    cohort = _launch(engine, clock)
    assert run_once(JOBS["sync"], engine, clock)
    clock.set(START + timedelta(minutes=3))
    real_mark_rows = live.mark_rows
    bets = []

    def another_process_bets_first(*args: Any, **kwargs: Any) -> Any:
        if not bets:
            bets.append(_bet_elsewhere(engine, cohort, clock))
        return real_mark_rows(*args, **kwargs)

    monkeypatch.setattr(live, "mark_rows", another_process_bets_first)
    assert live.mark_cohort(engine, cohort, clock, environ={}) == 3
    (bet_at,) = bets
    with Session(engine) as session:
        marks = session.exec(select(PortfolioSnapshotRow)).all()
    assert len(marks) == 3 and all(m.marked_at > bet_at for m in marks)
    assert min(m.cash for m in marks) == Decimal(10_000) - 100
    result = _reconcile(engine, cohort)
    assert result.exit_code == 0, result.output


def _bet_elsewhere(engine: Engine, cohort: str, clock: SimulatedClock) -> datetime:
    """A bet of $100 by the cohort's first agent, committed by another runtime; when it was stamped."""
    rt = load_runtime(engine, cohort, environ={}, with_bettors=False, lease_clock=clock)
    slot = rt.agents[0]
    entry = rt.source.snapshot(clock.now()).entries[0]
    quotes = build_quotes(
        rt.config.fills, [(entry.market, entry.price)], venue_of={entry.market.market_id: entry.market.venue}
    )
    with session_scope(engine) as session:
        decision_id = _decision_row(session, cohort, slot.id)
    bet = Bet(MarketId(entry.market.market_id), "YES", Money(Decimal(100)))
    with session_scope(engine) as session:
        lock_and_check(session, [slot.book])
        at = clock.now()
        outcome = execute(
            slot.book.ledger, Decision(actions=(bet,)), quotes, at, decision_id=str(decision_id)
        )
        write_fills(session, slot.book, outcome.fills, decision_id=decision_id, at=at)
    return at


def _decision_row(session: Session, cohort: str, agent_id: int) -> int:
    """A finished decision of round 0 to hang the bet on (fills name their decision)."""
    row = RoundRow(cohort_id=cohort, round_index=0, scheduled_at=START, status="running")
    session.add(row)
    session.flush()
    assert row.id is not None
    decision = DecisionRow(
        round_id=row.id, agent_id=agent_id, cohort_id=cohort, claim_token="t", status="done", claimed_at=START
    )
    session.add(decision)
    session.flush()
    assert decision.id is not None
    return decision.id


def test_a_round_on_stale_sync_data_asks_no_model_and_says_why(engine: Engine, fake: FakePolymarket) -> None:
    """The sync stopped after round 0: a day later every stored price is older than
    ``prices.snapshot_max_age_live``, so round 1 offers no market. Nobody is asked (the provider
    sees no request), the round is stored as empty with the reason, and the job and ``arena
    cohort show`` say it."""
    with FakeOpenAIServer() as provider:
        provider.responder = lambda _: Reply.ok(HOLD, cost=0.001)
        clock = TickingClock(START - timedelta(minutes=5))
        llm = {"kind": "llm", "model": "fake/model", "base_url": provider.base_url, "api_key_env": ""}
        agents = [
            {"name": "fav", "kind": "favorite"},
            {"name": "llm", **llm, "knowledge_cutoff": "2024-12-01"},
        ]
        cohort = _launch(engine, clock, agents=agents)
        assert run_once(JOBS["sync"], engine, clock)
        clock.set(START + timedelta(minutes=1))
        assert run_once(JOBS["rounds"], engine, clock)
        assert len(provider.requests) == 1
        clock.set(START + timedelta(days=1, minutes=1))  # no sync since
        assert run_once(JOBS["rounds"], engine, clock)
        assert len(provider.requests) == 1  # round 1 asked nobody
    with Session(engine) as session:
        rounds = {
            r.round_index: r for r in session.exec(select(RoundRow).where(RoundRow.cohort_id == cohort))
        }
        later = session.exec(select(DecisionRow).where(DecisionRow.round_id == rounds[1].id)).all()
        message = session.exec(
            select(JobRunRow.message).where(JobRunRow.job == "rounds").order_by(col(JobRunRow.started_at))
        ).all()[-1]
    assert (rounds[0].status, rounds[1].status, rounds[1].market_count) == ("done", "empty", 0)
    assert later == []
    assert rounds[1].note is not None and "prices.snapshot_max_age_live (6h)" in rounds[1].note
    assert rounds[1].finished_at is not None
    assert message.startswith("0 rounds run, 1 asked nobody: ") and rounds[1].note in message
    url = engine.url.render_as_string(hide_password=False)
    shown = CliRunner().invoke(app, ["cohort", "show", cohort, "--database-url", url])
    assert shown.exit_code == 0, shown.output
    assert "1 rounds asked nobody" in shown.output and "round 1: offered no market" in shown.output
    assert "rounds 2/2" in shown.output


def test_a_planner_queues_no_decision_unit_for_a_round_with_nothing_to_trade(
    engine: Engine, fake: FakePolymarket
) -> None:
    clock = TickingClock(START - timedelta(minutes=5))
    cohort = _launch(engine, clock)
    assert run_once(JOBS["sync"], engine, clock)
    clock.set(START + timedelta(days=1, minutes=1))
    rt = load_runtime(engine, cohort, environ={}, lease_clock=clock)
    report = asyncio.run(plan_round(rt, 1, START + timedelta(days=1)))
    assert (report.status, report.market_count) == ("empty", 0)
    assert report.note is not None and "is the sync job running?" in report.note
    with Session(engine) as session:
        assert session.exec(select(WorkUnitRow)).all() == []
        assert session.exec(select(DecisionRow)).all() == []


def test_a_round_an_earlier_run_already_asked_is_finished_not_emptied(
    engine: Engine, fake: FakePolymarket
) -> None:
    """A run claimed round 1's decisions, then died; the prices went stale meanwhile. The round
    is finished as it began (its agents asked), never turned empty under their claims."""
    clock = TickingClock(START - timedelta(minutes=5))
    cohort = _launch(engine, clock)
    assert run_once(JOBS["sync"], engine, clock)
    clock.set(START + timedelta(days=1, minutes=1))
    rt = load_runtime(engine, cohort, environ={}, lease_clock=clock)
    at = START + timedelta(days=1)
    _, universe = rounds.round_snapshot(rt, at)
    with session_scope(engine) as session:
        rounds.open_and_claim(session, rt, 1, at, universe, new_token())
    rt.lease = timedelta(microseconds=1)  # the dead run's claims have expired
    report = asyncio.run(rounds.run_round(rt, 1, at))
    assert report.status == "done" and set(report.statuses.values()) == {"done"}
