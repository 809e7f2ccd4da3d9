"""The OpenAI chat-completions wire format, as pure functions (no IO).

Kept apart from the HTTP loop so that every shape a provider sends back (OpenRouter's
``usage.cost``, an ``{"error": ...}`` body inside an HTTP 200, content as a list of parts,
a missing ``usage`` block) can be tested on recorded payloads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from agents.llm.errors import ChatError, ErrorKind, Spend
from agents.llm.settings import LLMSettings
from agents.tools import ToolSpec
from agents.types import MAX_REQUEST_COST_USD, spend_problem

_MESSAGE_CHARS = 300  # how much of an error body goes into a one-line error message


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """One entry of an assistant message's ``tool_calls``, as the model wrote it (arguments unparsed)."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Completion:
    """One successful HTTP exchange: the model's text, any tool calls, and what it cost."""

    content: str
    finish_reason: str | None
    spend: Spend
    tool_calls: tuple[ToolRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One chat message, with its content already written as a JSON string literal (quotes included).

    A prompt's literal is assembled from the market list escaped once per round (prompt.py), so
    an agent's request body is joined from ready parts: json-encoding ~70 KB per call was a third
    of the transport's CPU in a 100-agent round. Any other text is escaped to ASCII, so what the
    model sent back still goes out as valid UTF-8 JSON even if it held a lone surrogate escape.
    """

    role: str
    content: str
    content_json: str
    extra_json: str = ""  # further members of the message object, each with its leading comma

    @classmethod
    def of(cls, role: str, content: str) -> ChatMessage:
        return cls(role, content, json.dumps(content))

    @classmethod
    def calling(cls, content: str, calls: Sequence[ToolRequest]) -> ChatMessage:
        """The assistant's turn that asked for ``calls``, sent back as the protocol requires."""
        listed = [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
        shown = "\n".join(f"(tool call {c.call_id}: {c.name} {c.arguments})" for c in calls)
        return cls(
            "assistant",
            f"{content}\n{shown}" if content else shown,
            json.dumps(content) if content else "null",
            f',"tool_calls":{json.dumps(listed)}',
        )

    @classmethod
    def tool_result(cls, call_id: str, text: str) -> ChatMessage:
        return cls("tool", text, json.dumps(text), f',"tool_call_id":{json.dumps(call_id)}')


def encode_request(
    settings: LLMSettings,
    messages: Sequence[ChatMessage],
    schema: Mapping[str, Any],
    tools: Sequence[ToolSpec] = (),
) -> bytes:
    """The UTF-8 JSON body of one chat-completions request; unset options are left out, not nulled."""
    body = _request_options(settings, schema)
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
            }
            for t in tools
        ]
    options = json.dumps(body, ensure_ascii=False, allow_nan=False)
    listed = ",".join(
        f'{{"role":{json.dumps(m.role)},"content":{m.content_json}{m.extra_json}}}' for m in messages
    )
    return f'{options[:-1]},"messages":[{listed}]}}'.encode()


def _request_options(settings: LLMSettings, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Every field of the request body but the messages (never empty: the model is always named)."""
    body: dict[str, Any] = {"model": settings.model}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.seed is not None:
        body["seed"] = settings.seed
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.reasoning is not None:
        body["reasoning"] = settings.reasoning
    if settings.response_format == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "decision", "strict": False, "schema": dict(schema)},
        }
    elif settings.response_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def kind_for_status(status: int) -> ErrorKind:
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 402:
        return ErrorKind.PAYMENT
    if status == 408:
        return ErrorKind.TIMEOUT
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if 500 <= status <= 599:
        return ErrorKind.SERVER
    return ErrorKind.BAD_REQUEST


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """``Retry-After`` as delta-seconds; an HTTP-date (or garbage) is ignored in favour of backoff."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def parse_response(status: int, headers: Mapping[str, str], text: str, settings: LLMSettings) -> Completion:
    """A Completion from one HTTP response, or ChatError naming what was wrong with it."""
    payload = _json_or_none(text)
    if status != 200:
        detail = _error_detail(payload) or _clip(text) or "(empty body)"
        raise ChatError(
            kind_for_status(status),
            f"HTTP {status}: {detail}",
            text,
            retry_after_s=retry_after_seconds(headers),
        )
    if not isinstance(payload, dict):
        raise ChatError(ErrorKind.SERVER, f"HTTP 200 with a non-JSON body: {_clip(text)!r}", text)
    spend, problem = _spend(payload.get("usage"), settings)
    if problem is not None:
        raise ChatError(
            ErrorKind.INVALID_USAGE,
            f"HTTP 200 with implausible usage: {problem}; counted as ${MAX_REQUEST_COST_USD} "
            "(the most one request may cost)",
            text,
            spend=spend,
        )
    if "error" in payload:
        code = payload["error"].get("code") if isinstance(payload["error"], dict) else None
        kind = (
            kind_for_status(code)
            if isinstance(code, int) and not isinstance(code, bool)
            else ErrorKind.SERVER
        )
        raise ChatError(kind, f"HTTP 200 with an error body: {_error_detail(payload)}", text, spend=spend)
    choice = _first_choice(payload)
    if choice is None:
        raise ChatError(ErrorKind.EMPTY_CONTENT, "the response has no choices[0].message", text, spend=spend)
    message, finish_reason = choice
    if finish_reason == "error":
        raise ChatError(
            ErrorKind.SERVER, "the provider ended the completion with finish_reason=error", text, spend=spend
        )
    return Completion(
        _content_text(message.get("content")), finish_reason, spend, _tool_requests(message.get("tool_calls"))
    )


def _tool_requests(value: Any) -> tuple[ToolRequest, ...]:
    """``message.tool_calls`` as written; a malformed entry keeps what it has (an empty name, or
    arguments given as an object re-encoded) so the model is told what was wrong with it, and an
    entry without an id gets one, since its answer must name a call."""
    if not isinstance(value, list):
        return ()
    found = []
    for index, entry in enumerate(value):
        fields: dict[str, Any] = entry if isinstance(entry, dict) else {}
        function = fields.get("function")
        function = function if isinstance(function, dict) else {}
        call_id = fields.get("id") if isinstance(fields.get("id"), str) and fields.get("id") else None
        name = function.get("name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = "" if arguments is None else json.dumps(arguments)
        found.append(
            ToolRequest(call_id or f"call_{index + 1}", name if isinstance(name, str) else "", arguments)
        )
    return tuple(found)


def _first_choice(payload: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None] | None:
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    finish_reason = choices[0].get("finish_reason")
    if not isinstance(message, dict):
        return None
    return message, finish_reason if isinstance(finish_reason, str) else None


def _content_text(content: Any) -> str:
    """``message.content`` as text: a string, null, or a list of ``{"type": "text"}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _spend(usage: Any, settings: LLMSettings) -> tuple[Spend, str | None]:
    """Tokens as reported; cost as reported (OpenRouter ``usage.cost``), else from the price table.

    Figures that are not plausible (``agents.types.spend_problem``: NaN, negative, a cost of
    1e308, a billion tokens) come back with the problem, counted as no tokens and the ceiling
    cost, since what the request really cost is unknown."""
    if not isinstance(usage, dict):
        return Spend(), None
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    reported = _money(usage.get("cost"))
    problem = spend_problem(prompt, completion, Decimal(0) if reported is None else reported)
    if problem is None:  # the counts are whole numbers and the cost, if any, a Decimal in range
        tokens = cast(int, prompt), cast(int, completion)
        cost = settings.cost_from_tokens(*tokens) if reported is None else cast(Decimal, reported)
        problem = spend_problem(*tokens, cost)  # a price table can make plausible tokens cost too much
        if problem is None:
            return Spend(*tokens, cost), None
    return Spend(cost_usd=MAX_REQUEST_COST_USD), problem


def _count(value: Any) -> object:
    """A token count as reported: missing is 0; a whole float (``1000.0``) is its int; anything
    else is kept for ``spend_problem`` to refuse."""
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _money(value: Any) -> object:
    """A reported cost: missing is None (the price table decides); a number or decimal string is a
    Decimal; anything else is kept for ``spend_problem`` to refuse."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return value
    try:
        return Decimal(str(value).strip())
    except InvalidOperation:
        return value


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _error_detail(payload: Any) -> str | None:
    """The ``error.message`` (and code) of an OpenAI-style error body."""
    if not isinstance(payload, dict) or not isinstance(payload.get("error"), dict):
        return None
    error = payload["error"]
    message = error.get("message")
    code = error.get("code")
    text = _clip(str(message)) if message is not None else "(no message)"
    return f"{text} (code {code})" if code is not None else text


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MESSAGE_CHARS else flat[:_MESSAGE_CHARS] + "…"
