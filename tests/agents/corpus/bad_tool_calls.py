"""Bad tool calls a model can make, for the tool loop of the LLM bettor (tests/agents/test_llm_tool_calls.py).

Each case is one assistant turn's ``tool_calls`` list as the provider sends it, and ``reason``:
text the error result sent back to the model must contain, naming the planted defect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agents.llm.tool_loop import MAX_ARGUMENT_CHARS


@dataclass(frozen=True)
class BadCall:
    name: str
    tool_calls: list[Any]
    reason: str


def _call(name: Any, arguments: Any, call_id: Any = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


BAD_CALLS = (
    BadCall("unknown-tool", [_call("buy_now", "{}")], "unknown tool 'buy_now'"),
    BadCall("empty-name", [_call("", "{}")], "unknown tool ''"),
    BadCall("name-not-a-string", [_call(42, "{}")], "unknown tool ''"),
    BadCall("no-function-object", [{"id": "call_1", "type": "function"}], "unknown tool ''"),
    BadCall("arguments-not-json", [_call("lookup", "{market_id: A}")], "arguments are not valid JSON"),
    BadCall("arguments-truncated", [_call("lookup", '{"market_id": "A"')], "arguments are not valid JSON"),
    BadCall("arguments-a-list", [_call("lookup", '["A"]')], "arguments must be a JSON object, got list"),
    BadCall("arguments-a-string", [_call("lookup", '"A"')], "arguments must be a JSON object, got str"),
    BadCall(
        "huge-arguments",
        [_call("lookup", json.dumps({"market_id": "A" * (MAX_ARGUMENT_CHARS * 50)}))],
        "characters long; the limit is",
    ),
    BadCall(
        "unknown-argument", [_call("lookup", '{"market_id": "A", "mode": "x"}')], "unknown argument(s) 'mode'"
    ),
    BadCall("missing-argument", [_call("lookup", "{}")], "missing argument(s) market_id"),
    BadCall("argument-wrong-type", [_call("lookup", '{"market_id": 7}')], "expected a string, got int"),
    BadCall("tool-refuses", [_call("lookup", '{"market_id": "nowhere"}')], "lookup: no market 'nowhere'"),
    BadCall("tool-too-slow", [_call("slow", "{}")], "slow did not answer within"),
    BadCall("tool-crashes", [_call("broken", "{}")], "broken failed on the arena's side"),
)
