"""A healthy live cohort run by a real ``arena serve`` reconciles: its rounds are asked after their
scheduled times, an LLM agent answers seconds later (a fake provider on loopback), and the marks
job, polling every second, marks portfolios between each round's time and its fills. Every fill
is stamped when it executed and every mark agrees with the fills up to its time, so ``arena
cohort reconcile`` exits 0. Venues: the fake Polymarket on loopback."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db.models import DecisionRow, FillRow, PortfolioSnapshotRow, RoundRow
from arena.engine.runtime.sources import open_source
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply
from tests.fakes.polymarket_server import FakePolymarket
from tests.workers.llm_study import start, stop

pytestmark = pytest.mark.slow
MARKET = re.compile(r"polymarket:0x[0-9a-f]{64}")
ROUNDS = 3


def _slow_bet(request: RecordedRequest) -> Reply:
    """After 3 s: $60 on YES in the first market the prompt names, with a stated probability."""
    markets = sorted(set(MARKET.findall(json.dumps(request.body))))
    bet = {"type": "bet", "market_id": markets[0], "outcome": "YES", "amount": 60}
    answer = {"reasoning": "a small edge", "actions": [bet], "probabilities": {markets[0]: 0.6}}
    return Reply.ok(json.dumps(answer), delay_s=3.0, cost=0.001)


def _launch(engine: Engine, base_url: str, start_at: datetime) -> str:
    llm = {"name": "llm", "kind": "llm", "model": "fake/model", "base_url": base_url, "api_key_env": ""}
    config = parse_config(
        {
            "name": "served",
            "mode": "live",
            "venue": "polymarket",
            "start": start_at.isoformat(),
            "schedule": {"every": "12s", "rounds": ROUNDS},
            "marks": {"every": "2s"},
            "tournament": {"hidden_fraction": 0},  # prices shown from the first round: bets
            "call_timeout": "20s",
            "round_budget": "30s",
            "agents": [
                {"name": "fav", "kind": "favorite"},
                {"name": "mkt", "kind": "market"},
                {**llm, "knowledge_cutoff": "2024-12-01", "timeout_s": 20},
            ],
        }
    )
    clock = SimulatedClock(start_at)
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def _wait(predicate: Callable[[], bool], what: str, log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{log.read_text()[-3000:]}"
        time.sleep(0.2)


def _rounds(engine: Engine, cohort: str) -> list[RoundRow]:
    with Session(engine) as session:
        query = select(RoundRow).where(RoundRow.cohort_id == cohort).order_by(col(RoundRow.round_index))
        return list(session.exec(query))


def test_a_cohort_run_by_serve_reconciles_with_marks_between_its_rounds_and_fills(
    engine: Engine, fake: FakePolymarket, tmp_path: Path
) -> None:
    url = engine.url.render_as_string(hide_password=False)
    log = tmp_path / "serve.log"
    with FakeOpenAIServer() as provider:
        provider.responder = _slow_bet
        # Round 0 once the leader's start-up sync has stored prices, even on a loaded machine.
        cohort = _launch(engine, provider.base_url, datetime.now(UTC) + timedelta(seconds=12))
        env = {
            "ARENA_DATABASE_URL": url,
            "ARENA_GAMMA_URL": fake.url,
            "ARENA_CLOB_URL": fake.url,
            "ARENA_ROUNDS_EVERY": "1s",
            "ARENA_MARKS_EVERY": "1s",
            "ARENA_SYNC_EVERY": "4s",
            "ARENA_SETTLE_EVERY": "5s",
            "ARENA_COMPLETE_EVERY": "5s",
        }
        serve = start("serve", "--poll", "0.3", log=log, env=env)
        try:
            done = ["done"] * ROUNDS
            _wait(lambda: [r.status for r in _rounds(engine, cohort)] == done, f"{ROUNDS} rounds", log)
        finally:
            assert stop(serve) == 0, log.read_text()[-3000:]
    rounds = _rounds(engine, cohort)
    with Session(engine) as session:
        fills = session.exec(select(FillRow).where(FillRow.kind == "buy")).all()
        marks = session.exec(
            select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.cohort_id == cohort)
        ).all()
        decisions = session.exec(select(DecisionRow).where(DecisionRow.cohort_id == cohort)).all()
    by_decision = {d.id: d for d in decisions}
    llm_fills = [f for f in fills if f.decision_id is not None and by_decision[f.decision_id].raw_prompt]
    assert len(llm_fills) == ROUNDS  # the slow agent bet in every round
    # marks taken after a round's time and before its slow agent's answer came in and executed
    between = [
        m for r in rounds for m in marks if r.finished_at and r.scheduled_at < m.marked_at < r.finished_at
    ]
    assert between, "no mark fell between a round's time and its fills"
    for d in decisions:
        assert d.decided_at is not None
    llm_answers = sorted(by_decision[f.decision_id].decided_at for f in llm_fills)  # type: ignore[index,type-var]
    assert all(r.scheduled_at + timedelta(seconds=3) <= a for r, a in zip(rounds, llm_answers, strict=True))
    assert all(f.filled_at >= by_decision[f.decision_id].decided_at for f in fills)  # type: ignore[index,operator]
    reconciled = CliRunner().invoke(app, ["cohort", "reconcile", cohort, "--database-url", url])
    assert reconciled.exit_code == 0, reconciled.output
    assert "3 ledgers agree with their fill logs" in reconciled.output
