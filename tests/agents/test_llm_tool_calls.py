"""The LLM bettor's tool loop over real HTTP: calls answered, bad calls answered with errors,
the budget enforced, and every request and call accounted for.

The toolbox here is a small in-memory one (the arena's own tools are tested in tests/tools);
what is under test is the loop: the protocol on the wire, its bounds and its records.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

import anyio
import httpx
import pytest

from agents.llm.bettor import LLMBettor
from agents.llm.settings import LLMSettings
from agents.tools import STORED_CHARS, ToolError, ToolSpec
from agents.types import AgentView
from tests.agents.corpus.bad_tool_calls import BAD_CALLS, BadCall
from tests.agents.corpus.generate import valid_text
from tests.agents.corpus.world import view
from tests.fakes.openai_server import FakeOpenAIServer, Reply


class LittleToolbox:
    """``lookup(market_id)`` answers for market "A"; ``slow`` sleeps; ``broken`` raises."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Mapping[str, Any]]] = []

    def specs(self) -> Sequence[ToolSpec]:
        lookup = {
            "type": "object",
            "properties": {"market_id": {"type": "string"}},
            "required": ["market_id"],
            "additionalProperties": False,
        }
        empty = {"type": "object", "properties": {}, "additionalProperties": False}
        return [
            ToolSpec("lookup", "Look a market up.", lookup),
            ToolSpec("slow", "Takes too long.", empty),
            ToolSpec("broken", "Always fails.", empty),
        ]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        self.asked.append((name, arguments))
        if name == "slow":
            await anyio.sleep(5)
        if name == "broken":
            raise RuntimeError("database is down")
        unknown = sorted(set(arguments) - {"market_id"})
        if unknown:
            raise ToolError(f"unknown argument(s) {', '.join(repr(k) for k in unknown)}")
        if "market_id" not in arguments:
            raise ToolError("missing argument(s) market_id")
        if not isinstance(arguments["market_id"], str):
            raise ToolError(f"market_id: expected a string, got {type(arguments['market_id']).__name__}")
        if arguments["market_id"] != "A":
            raise ToolError(f"no market {arguments['market_id']!r}")
        return json.dumps({"market_id": "A", "price": "0.4"})


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def fresh(server: FakeOpenAIServer) -> None:
    server.requests.clear()


def settings(server: FakeOpenAIServer, **tools: Any) -> LLMSettings:
    return LLMSettings(
        model="m",
        base_url=server.base_url,
        prompt_version="v2",
        invalid_retries=0,
        transport_retries=0,
        tools={"enabled": True, "max_calls": 3, "timeout_s": 0.5, **tools},
    )


async def decide(server: FakeOpenAIServer, agent_view: AgentView, llm: LLMSettings) -> Any:
    async with httpx.AsyncClient() as http:
        return await LLMBettor("researcher", llm, http, None).decide(agent_view)


@pytest.mark.anyio
async def test_a_tool_call_is_answered_on_the_protocol_and_recorded(server: FakeOpenAIServer) -> None:
    server.script(Reply.calls(("lookup", {"market_id": "A"}), cost=0.001), Reply.ok(valid_text(), cost=0.002))
    toolbox = LittleToolbox()
    decision = await decide(server, replace(view(), toolbox=toolbox), settings(server))
    assert not decision.is_error, decision.error
    assert toolbox.asked == [("lookup", {"market_id": "A"})]
    first, second = (r.body for r in server.requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup", "slow", "broken"]
    assert first["tools"][0]["type"] == "function" and "parameters" in first["tools"][0]["function"]
    calling, result = second["messages"][-2:]
    assert calling["role"] == "assistant" and calling["content"] is None
    assert calling["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"market_id": "A"}'},
        }
    ]
    assert result == {
        "role": "tool",
        "content": '{"market_id": "A", "price": "0.4"}',
        "tool_call_id": "call_1",
    }
    (call,) = decision.tool_calls
    assert (call.step, call.call_id, call.name, call.is_error) == (1, "call_1", "lookup", False)
    assert call.arguments.text == '{"market_id": "A"}' and call.result.text == result["content"]
    assert call.latency_s >= 0
    usage = decision.usage
    assert usage.attempts == 2 and [r.outcome for r in usage.requests] == ["tool_calls", "answer"]
    assert usage.cost_usd == Decimal("0.003") == sum(r.cost_usd for r in usage.requests)
    assert usage.prompt_tokens == 2000 and usage.completion_tokens == 400
    assert "[tool]" in (decision.raw_prompt or "") and "(tool call call_1: lookup" in (
        decision.raw_prompt or ""
    )


@pytest.mark.anyio
@pytest.mark.parametrize("case", BAD_CALLS, ids=[c.name for c in BAD_CALLS])
async def test_every_bad_tool_call_gets_an_error_result_and_the_decision_goes_on(
    server: FakeOpenAIServer, case: BadCall
) -> None:
    server.script(
        Reply(content=None, finish_reason="tool_calls", tool_calls=case.tool_calls), Reply.ok(valid_text())
    )
    decision = await decide(server, replace(view(), toolbox=LittleToolbox()), settings(server))
    assert not decision.is_error, decision.error
    (call,) = decision.tool_calls
    assert call.is_error
    sent_back = server.requests[1].body["messages"][-1]
    assert sent_back["role"] == "tool" and sent_back["tool_call_id"] == call.call_id
    message = json.loads(sent_back["content"])["error"]
    assert case.reason in message, message
    assert len(message) < 500 and "\n" not in message


@pytest.mark.anyio
async def test_huge_arguments_are_stored_by_digest_and_size_only(server: FakeOpenAIServer) -> None:
    huge = next(c for c in BAD_CALLS if c.name == "huge-arguments")
    server.script(
        Reply(content=None, finish_reason="tool_calls", tool_calls=huge.tool_calls), Reply.ok(valid_text())
    )
    decision = await decide(server, replace(view(), toolbox=LittleToolbox()), settings(server))
    (call,) = decision.tool_calls
    assert call.arguments.text is None and call.arguments.chars > STORED_CHARS
    assert len(call.arguments.sha256) == 64 and call.result.text is not None


@pytest.mark.anyio
async def test_calls_past_the_budget_are_refused_and_a_model_that_keeps_calling_is_stopped(
    server: FakeOpenAIServer,
) -> None:
    four = Reply.calls(*[("lookup", {"market_id": "A"})] * 4)
    server.script(four, Reply.calls(("lookup", {"market_id": "A"})))
    toolbox = LittleToolbox()
    decision = await decide(server, replace(view(), toolbox=toolbox), settings(server, max_calls=3))
    assert decision.is_error and decision.error_kind == "tool_loop"
    assert "budget of 3 tool calls" in (decision.error or "")
    assert len(toolbox.asked) == 3 and len(server.requests) == 2  # the fourth call never ran
    assert [c.is_error for c in decision.tool_calls] == [False, False, False, True]
    refused = json.loads(server.requests[1].body["messages"][-1]["content"])["error"]
    assert "budget spent (3 calls per decision)" in refused
    assert decision.usage.attempts == 2 and len(decision.usage.requests) == 2


@pytest.mark.anyio
async def test_a_model_told_its_budget_is_spent_may_still_answer(server: FakeOpenAIServer) -> None:
    server.script(
        Reply.calls(("lookup", {"market_id": "A"}), ("lookup", {"market_id": "A"})), Reply.ok(valid_text())
    )
    decision = await decide(server, replace(view(), toolbox=LittleToolbox()), settings(server, max_calls=1))
    assert not decision.is_error, decision.error
    assert [c.is_error for c in decision.tool_calls] == [False, True]


@pytest.mark.anyio
async def test_without_tools_enabled_or_offered_no_tools_are_sent(server: FakeOpenAIServer) -> None:
    server.script(Reply.ok(valid_text()), Reply.ok(valid_text()))
    off = settings(server, enabled=False)
    assert not (await decide(server, replace(view(), toolbox=LittleToolbox()), off)).is_error
    assert not (await decide(server, view(), settings(server))).is_error
    assert all("tools" not in r.body for r in server.requests)


def test_tools_need_the_prompt_version_that_explains_them() -> None:
    with pytest.raises(ValueError, match=r"tools\.enabled needs a prompt version"):
        LLMSettings(model="m", tools={"enabled": True})
    with pytest.raises(ValueError, match="max_calls"):
        LLMSettings(model="m", prompt_version="v2", tools={"enabled": True, "max_calls": 51})


@pytest.mark.anyio
async def test_arguments_sent_as_an_object_and_a_call_without_id_are_still_answered(
    server: FakeOpenAIServer,
) -> None:
    """Some servers send ``arguments`` as an object, or omit the id: the call is still answered
    (arguments re-encoded as JSON text, an id given) so the conversation stays well formed."""
    entry = {"type": "function", "function": {"name": "lookup", "arguments": {"market_id": "A"}}}
    server.script(Reply(content=None, finish_reason="tool_calls", tool_calls=[entry]), Reply.ok(valid_text()))
    decision = await decide(server, replace(view(), toolbox=LittleToolbox()), settings(server))
    assert not decision.is_error, decision.error
    (call,) = decision.tool_calls
    assert (call.call_id, call.arguments.text, call.is_error) == ("call_1", '{"market_id": "A"}', False)
    calling, result = server.requests[1].body["messages"][-2:]
    assert calling["tool_calls"][0]["id"] == result["tool_call_id"] == "call_1"
