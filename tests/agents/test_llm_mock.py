"""The mock provider: the real LLM bettor (prompt, request, parse, tool loop, retry) answered in-process."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import pytest

from agents.llm.bettor import LLMBettor
from agents.llm.context import OutputContext
from agents.llm.mock import mock_client
from agents.llm.settings import LLMSettings
from agents.registry import AgentConfigError, build_bettor, model_identity, shown_model, validate_agent
from agents.tools import ToolSpec
from agents.types import Decision
from portfolio.validation import check_actions
from tests.agents.corpus.world import ELECTION, FED, RAIN, SETTLED_PRICE, view

pytestmark = pytest.mark.anyio


class ResearchToolbox:
    """Two of the arena's tool names, answering from memory; records what was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def specs(self) -> Sequence[ToolSpec]:
        schema = {"type": "object", "properties": {}}
        return [ToolSpec("price_history", "prices", schema), ToolSpec("search_news", "news", schema)]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        self.asked.append((name, dict(arguments)))
        return json.dumps({"ok": name})


def mock(**mock: Any) -> LLMSettings:
    extra = {"prompt_version": "v2", "tools": {"enabled": True}} if mock.pop("tools", False) else {}
    return LLMSettings.model_validate({"model": "seeded", "provider": "mock", "mock": mock, **extra})


async def decide(settings: LLMSettings, **view_changes: Any) -> Decision:
    bettor = LLMBettor("mocky", settings, mock_client(settings), None)
    return await bettor.decide(dataclasses.replace(view(), **view_changes))


def legal(decision: Decision) -> bool:
    """Whether the ledger's own check accepts the decision in ``view()``."""
    v = view()
    context = OutputContext.for_view(v, v.snapshot.entries)
    return not check_actions(
        decision.actions,
        cash=context.cash,
        rules=context.rules,
        quotes=context.quotes,
        positions=context.positions,
    )


async def test_a_mock_answer_is_a_valid_decision_through_the_real_parser() -> None:
    decision = await decide(mock(markets=2, bet_fraction=0.5, belief="market"))
    assert not decision.is_error and legal(decision)
    # the two highest-volume YES/NO markets with a tradable price, half the max bet ($2,500) each
    assert [(a.market_id, a.amount) for a in decision.actions] == [
        (FED, Decimal(1250)),
        (RAIN, Decimal(1250)),
    ]
    assert all(a.outcome == "YES" for a in decision.actions)  # belief = price: YES on the tie
    # the market's own price stated for every listed YES/NO market, none for the multi-outcome one
    assert decision.probabilities == {FED: {"YES": 0.25}, RAIN: {"YES": 0.4}, SETTLED_PRICE: {"YES": 1.0}}
    assert ELECTION not in decision.probabilities
    assert json.loads(decision.raw_response or "")["reasoning"].startswith("mock policy")
    assert decision.usage.attempts == 1 and decision.usage.cost_usd == 0 and decision.usage.prompt_tokens > 0


async def test_the_sampling_seed_changes_the_noisy_beliefs_and_the_same_seed_repeats_them() -> None:
    def settings(seed: int) -> LLMSettings:
        return LLMSettings.model_validate({"model": "m", "provider": "mock", "seed": seed})

    first, again, other = [await decide(settings(s)) for s in (1, 1, 2)]
    assert first.probabilities == again.probabilities and first.actions == again.actions
    assert first.probabilities != other.probabilities
    assert all(0.01 <= p["YES"] <= 0.99 for p in first.probabilities.values())


async def test_hidden_prices_state_beliefs_but_place_no_bet() -> None:
    decision = await decide(mock(belief="half"), prices_visible=False)
    assert not decision.is_error and decision.actions == ()
    assert decision.probabilities[FED] == {"YES": 0.5}


async def test_tool_calls_go_through_the_real_tool_loop_before_the_answer() -> None:
    toolbox = ResearchToolbox()
    decision = await decide(mock(tools=True, tool_calls=3), toolbox=toolbox)
    assert not decision.is_error and legal(decision)
    assert [name for name, _ in toolbox.asked] == ["price_history", "search_news", "price_history"]
    assert toolbox.asked[0][1] == {"market_id": FED, "days": 14}
    assert [c.name for c in decision.tool_calls] == ["price_history", "search_news", "price_history"]
    assert decision.usage.attempts == 4  # three tool steps, then the answer


async def test_an_invalid_first_answer_is_refused_and_corrected_through_the_retry() -> None:
    decision = await decide(mock(invalid_rate=1.0))
    assert not decision.is_error and legal(decision) and decision.usage.attempts == 2
    assert "Your answer was rejected" in (decision.raw_prompt or "")
    assert "expected a JSON number" in (decision.raw_prompt or "")


async def test_with_no_retry_left_the_invalid_answer_is_recorded_not_repaired() -> None:
    settings = LLMSettings.model_validate(
        {"model": "m", "provider": "mock", "invalid_retries": 0, "mock": {"invalid_rate": 1.0}}
    )
    decision = await decide(settings)
    assert decision.is_error and decision.error_kind == "invalid_output" and decision.actions == ()


def test_a_mock_needs_no_key_and_takes_no_endpoint() -> None:
    settings = {"model": "seeded", "provider": "mock"}
    validate_agent("llm", settings, environ={})  # no OPENROUTER_API_KEY: fine for a mock
    bettor = build_bettor("m", "llm", settings, seed=0, environ={}, new_http_client=None)
    assert bettor.name == "m"
    with pytest.raises(AgentConfigError, match="provider 'mock' answers in-process and takes no base_url"):
        validate_agent("llm", {**settings, "base_url": "http://127.0.0.1:9/v1"}, environ={})
    with pytest.raises(AgentConfigError, match="'mock' settings apply only to provider"):
        validate_agent("llm", {"model": "m", "mock": {"markets": 1}}, environ={"OPENROUTER_API_KEY": "k"})
    with pytest.raises(AgentConfigError, match="bet_fraction"):
        validate_agent("llm", {**settings, "mock": {"bet_fraction": 2}}, environ={})


def test_a_mock_is_labelled_mock_in_its_model_and_identity() -> None:
    settings = {"model": "seeded", "provider": "mock", "mock": {"markets": 1}}
    assert shown_model("llm", settings) == "mock/seeded"
    assert model_identity("llm", settings) == "llm mock/seeded @ mock (markets 1) prompt v1"
    assert shown_model("llm", {"model": "openai/gpt-4o"}) == "openai/gpt-4o"
    assert shown_model("kelly", {}) is None
