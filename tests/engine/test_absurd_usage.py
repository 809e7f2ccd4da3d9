"""One absurd number from a provider or a bot never ends a run: it is that decision's error.

A provider reporting ``usage.cost = 1e308`` (the run used to die in ``decision_values`` with
InvalidOperation, for every agent, and each resume paid again): the attempt is an
``invalid_usage`` error counted at the per-request ceiling, so ``budget.max_cost_usd`` still
stops the agent; the other agents and the run go on. Both backends.
"""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.db.models import LLMRequestRow
from arena.engine.replay.runner import ReplayRunner
from arena.engine.runtime.agent_http import AgentHttpClients
from tests.engine.helpers import config, launch_cohort, runtime, stored_decisions, tiny_dataset
from tests.fakes.openai_server import FakeOpenAIServer, Reply

HOLD = json.dumps({"reasoning": "Holding.", "actions": [], "probabilities": {}})


def run(engine: Engine, tmp_path: Path, agents: list[dict[str, Any]], rounds: int = 3) -> bool:
    data = config(tiny_dataset(tmp_path / "data"), agents, schedule={"every": "7d", "rounds": rounds})
    cohort_id, source = launch_cohort(engine, data)

    async def replay() -> bool:
        async with AgentHttpClients() as http:
            rt = runtime(engine, cohort_id, source, new_http_client=http.new_client)
            return (await ReplayRunner(rt).run()).completed

    return asyncio.run(replay())


def test_an_absurd_cost_is_the_attempts_error_and_the_budget_still_holds(
    engine: Engine, tmp_path: Path
) -> None:
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok(HOLD, cost=1e308)
        llm = {
            "name": "llm",
            "kind": "llm",
            "model": "test/m",
            "base_url": server.base_url,
            "api_key_env": "",
            "budget": {"max_cost_usd": "5"},
        }
        completed = run(engine, tmp_path, [llm, {"name": "market", "kind": "market"}])
        asked = len(server.requests)
    assert completed
    decisions = stored_decisions(engine)
    mine = [d for d in decisions if d.agent_id == 1]
    assert asked == 1  # never retried; then held by its budget
    assert [d.error_kind for d in mine] == ["invalid_usage", "over_budget", "over_budget"]
    assert mine[0].error is not None and mine[0].error.startswith(
        "HTTP 200 with implausible usage: usage.cost must be a number of dollars in [0, 1000], "
        "got Decimal('1E+308')"
    )
    assert mine[0].cost_usd == Decimal(1000) and mine[0].raw_response is not None
    assert "spent $1000.0000 of its $5 cap" in (mine[1].error or "")
    assert all(d.status == "done" for d in decisions if d.agent_id == 2)  # the others go on
    with Session(engine) as session:
        (request,) = session.exec(select(LLMRequestRow)).all()
    assert (request.outcome, request.cost_usd) == ("invalid_usage", Decimal(1000))


@pytest.mark.parametrize("mode", ["huge-cost", "nan-cost", "negative-tokens"])
def test_a_bots_impossible_usage_is_its_decisions_error(engine: Engine, tmp_path: Path, mode: str) -> None:
    bot = {
        "name": "bot",
        "kind": "plugin",
        "path": "tests.engine.bots:AbsurdUsageBettor",
        "settings": {"mode": mode},
    }
    assert run(engine, tmp_path, [bot, {"name": "market", "kind": "market"}], rounds=2)
    mine = [d for d in stored_decisions(engine) if d.agent_id == 1]
    assert [(d.status, d.error_kind) for d in mine] == [("error", "invalid_usage")] * 2
    assert all(d.actions_json == [] and d.cost_usd == Decimal(1000) for d in mine)  # its bet never ran
    assert mine[0].error is not None and mine[0].error.endswith("counted as the most its requests may cost")
