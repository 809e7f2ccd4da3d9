"""Every paid provider request is recorded with its cost as soon as it answered, so an attempt
that never stores its decision (the process died mid-commit; in the worker test, the worker was
killed) is still paid for: its charges stay, the spending caps count them, and the attempt that
takes the decision over stores only its own requests. An LLM agent on a fake provider on loopback.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.db.models import DecisionRow, LLMChargeRow, LLMRequestRow
from arena.engine.rounds import commit as round_commit
from arena.engine.rounds import run as rounds
from arena.engine.rounds.report import RoundReport
from arena.engine.runtime.agent_http import AgentHttpClients
from arena.engine.runtime.budgets import spend_by_agent
from arena.reports.overview import cohort_overview
from arena.scoring.load.database import load_frames
from arena.scoring.rules.costs import cost_metrics
from markets.replay import ReplaySource
from tests.engine.helpers import config, day, launch_cohort, runtime, tiny_dataset
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply

CENT = Decimal("0.01")


def _answer(request: RecordedRequest) -> Reply:
    """An invalid answer first, then (asked again with the reasons) a valid hold: two paid requests."""
    if len(request.body["messages"]) <= 2:
        return Reply.ok("I would rather not say.", cost=0.01)
    hold = {"reasoning": "holding", "actions": [], "probabilities": {}}
    return Reply.ok(json.dumps(hold), cost=0.01)


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.responder = _answer
        yield server


def _llm(base_url: str) -> dict[str, Any]:
    return {
        "name": "llm",
        "kind": "llm",
        "model": "fake/model",
        "base_url": base_url,
        "api_key_env": "",
        "knowledge_cutoff": "2024-12-01",
        "invalid_retries": 1,
    }


def _round(
    engine: Engine, cohort_id: str, source: ReplaySource, index: int, *, lease: timedelta | None = None
) -> RoundReport:
    """Round ``index`` (a week apart) run by a runtime of its own, as a fresh process would."""

    async def run() -> RoundReport:
        async with AgentHttpClients() as http:
            rt = runtime(engine, cohort_id, source, new_http_client=http.new_client)
            rt.lease = lease
            return await rounds.run_round(rt, index, day(7 * index))

    return asyncio.run(run())


def _charges(engine: Engine) -> list[LLMChargeRow]:
    with Session(engine) as session:
        return list(session.exec(select(LLMChargeRow).order_by(col(LLMChargeRow.seq))))


def test_a_stored_decision_accounts_for_its_charges(
    engine: Engine, tmp_path: Path, provider: FakeOpenAIServer
) -> None:
    cohort_id, source = launch_cohort(engine, config(tiny_dataset(tmp_path / "d"), [_llm(provider.base_url)]))
    assert _round(engine, cohort_id, source, 0).status == "done"
    with Session(engine) as session:
        decision = session.exec(select(DecisionRow)).one()
        requests = session.exec(select(LLMRequestRow)).all()
    assert (decision.cost_usd, len(requests)) == (2 * CENT, 2)
    assert _charges(engine) == []  # the decision holds them: nothing is counted twice
    assert spend_by_agent(engine, cohort_id) == {decision.agent_id: 2 * CENT}


def test_an_attempt_that_died_before_its_commit_is_still_paid_for(
    engine: Engine, tmp_path: Path, provider: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = config(tiny_dataset(tmp_path / "d"), [_llm(provider.base_url)], budget={"max_cost_usd": 0.03})
    cohort_id, source = launch_cohort(engine, data)

    def died(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the process died mid-commit")

    monkeypatch.setattr(round_commit, "write_fill_batches", died)
    with pytest.raises(RuntimeError, match="died mid-commit"):
        _round(engine, cohort_id, source, 0)
    monkeypatch.undo()
    first = _charges(engine)
    assert [(c.seq, c.cost_usd) for c in first] == [(1, CENT), (2, CENT)]  # paid, though not stored
    (token,) = {c.claim_token for c in first}
    agent_id = first[0].agent_id
    assert spend_by_agent(engine, cohort_id) == {agent_id: 2 * CENT}

    # the dead attempt's claim has expired: it is taken over
    assert _round(engine, cohort_id, source, 0, lease=timedelta(microseconds=1)).status == "done"
    assert len(provider.requests) == 4  # the provider was asked twice per attempt
    with Session(engine) as session:
        decision = session.exec(select(DecisionRow)).one()
    assert decision.claim_token != token and decision.cost_usd == 2 * CENT
    assert [(c.claim_token, c.seq) for c in _charges(engine)] == [(token, 1), (token, 2)]  # still there
    assert spend_by_agent(engine, cohort_id) == {agent_id: 4 * CENT}
    (agent,) = cohort_overview(engine, cohort_id).agents  # type: ignore[union-attr]
    assert agent.cost == 4 * CENT  # what `arena cohort show` gives as its cost
    assert cost_metrics(load_frames(engine, [cohort_id]))["cost"].to_list() == [4 * CENT]  # the leaderboard's

    # The cap ($0.03) counts the dead attempt: at $0.04 the agent is not asked in round 1.
    assert _round(engine, cohort_id, source, 1).status == "failed"  # its one agent held
    assert len(provider.requests) == 4
    with Session(engine) as session:
        held = session.exec(select(DecisionRow).order_by(col(DecisionRow.id).desc())).first()
    assert held is not None and held.error_kind == "over_budget" and "$0.0400" in (held.error or "")
