"""The chat-completions wire format on recorded payload shapes, and the fake server's concurrency."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

import anyio
import httpx
import pytest

from agents.llm.errors import ChatError, ErrorKind, Spend
from agents.llm.secret import Secret
from agents.llm.settings import LLMSettings
from agents.llm.wire import ChatMessage, encode_request, parse_response, retry_after_seconds
from tests.fakes.openai_server import FakeOpenAIServer, Reply

SETTINGS = LLMSettings(model="m", usd_per_mtok_input=Decimal("1"), usd_per_mtok_output=Decimal("2"))


def completion(message: dict[str, Any], usage: Any = None, finish_reason: str = "stop") -> str:
    body: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body)


@pytest.mark.parametrize(
    ("changes", "options"),
    [
        (
            {},
            {
                "max_tokens": 4096,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "decision", "strict": False, "schema": {"type": "object"}},
                },
            },
        ),
        (
            {
                "temperature": 0.2,
                "max_tokens": 900,
                "reasoning": {"effort": "low"},
                "response_format": "json_object",
            },
            {
                "temperature": 0.2,
                "max_tokens": 900,
                "reasoning": {"effort": "low"},
                "response_format": {"type": "json_object"},
            },
        ),
        ({"response_format": "none", "max_tokens": None}, {}),
    ],
)
def test_the_request_body_is_the_options_and_the_messages_as_utf8_json(
    changes: dict[str, Any], options: dict[str, Any]
) -> None:
    settings = LLMSettings(model="vendor/modèle", **changes)
    said = 'He said "ok" \\ é 🎲 \n\t'
    messages = [
        ChatMessage("user", said, json.dumps(said, ensure_ascii=False)),  # as the prompt writes its own
        ChatMessage.of("assistant", "lone \ud800 and \udfff, NUL \x00"),  # a model's answer echoed back
    ]
    body = encode_request(settings, messages, {"type": "object"})
    assert json.loads(body.decode("utf-8")) == {
        "model": "vendor/modèle",
        **options,
        "messages": [
            {"role": "user", "content": said},
            {"role": "assistant", "content": "lone \ud800 and \udfff, NUL \x00"},
        ],
    }


def test_openrouter_reported_cost_wins_over_the_price_table() -> None:
    text = completion({"content": "hi"}, {"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.000123})
    parsed = parse_response(200, {}, text, SETTINGS)
    assert parsed.content == "hi" and parsed.finish_reason == "stop"
    assert (parsed.spend.prompt_tokens, parsed.spend.completion_tokens) == (10, 5)
    assert parsed.spend.cost_usd == Decimal("0.000123")


def test_the_price_table_prices_tokens_when_no_cost_is_reported() -> None:
    parsed = parse_response(
        200, {}, completion({"content": "x"}, {"prompt_tokens": 1000, "completion_tokens": 500}), SETTINGS
    )
    assert parsed.spend.cost_usd == Decimal("0.002")  # 1000 × $1/M + 500 × $2/M


@pytest.mark.parametrize("usage", [None, "n/a", {}])
def test_missing_usage_counts_nothing(usage: Any) -> None:
    parsed = parse_response(200, {}, completion({"content": "x"}, usage), SETTINGS)
    assert (parsed.spend.prompt_tokens, parsed.spend.completion_tokens, parsed.spend.cost_usd) == (
        0,
        0,
        Decimal(0),
    )


@pytest.mark.parametrize(
    ("usage", "problem"),
    [
        ({"prompt_tokens": -1, "completion_tokens": 3}, "usage.prompt_tokens must be a whole number"),
        ({"prompt_tokens": 3, "completion_tokens": True}, "usage.completion_tokens must be a whole number"),
        ({"prompt_tokens": "10", "cost": 0.1}, "got '10'"),
        ({"prompt_tokens": 10**12}, "in [0, 10,000,000], got 1000000000000"),
        ({"cost": "NaN"}, "usage.cost must be a number of dollars in [0, 1000], got Decimal('NaN')"),
        ({"cost": 1e308}, "got Decimal('1E+308')"),
        ({"cost": -0.5}, "got Decimal('-0.5')"),
        ({"cost": [1]}, "got [1]"),
        ({"prompt_tokens": 9_000_000, "completion_tokens": 9_000_000}, "usage.cost must be"),  # priced
    ],
)
def test_implausible_usage_is_the_requests_error_counted_at_the_ceiling(usage: Any, problem: str) -> None:
    priced = SETTINGS.model_copy(
        update={"usd_per_mtok_input": Decimal(100), "usd_per_mtok_output": Decimal(100)}
    )
    with pytest.raises(ChatError) as caught:
        parse_response(200, {}, completion({"content": "x"}, usage), priced)
    assert caught.value.kind is ErrorKind.INVALID_USAGE and problem in caught.value.message
    assert caught.value.message.startswith("HTTP 200 with implausible usage: ")
    assert caught.value.spend == Spend(0, 0, Decimal(1000))  # unknown: counted as the most one request costs


def test_content_as_parts_and_null_content() -> None:
    parts = {
        "content": [{"type": "text", "text": '{"a": '}, {"type": "image"}, {"type": "text", "text": "1}"}]
    }
    assert parse_response(200, {}, completion(parts), SETTINGS).content == '{"a": 1}'
    assert parse_response(200, {}, completion({"content": None}), SETTINGS).content == ""


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (401, {"error": {"code": 401, "message": "No auth"}}, ErrorKind.AUTH),
        (402, {"error": {"code": 402, "message": "Insufficient credits"}}, ErrorKind.PAYMENT),
        (408, {"error": {"code": 408, "message": "Timed out"}}, ErrorKind.TIMEOUT),
        (429, {"error": {"code": 429, "message": "Rate limited"}}, ErrorKind.RATE_LIMIT),
        (503, "Service Unavailable", ErrorKind.SERVER),
        (422, {"detail": "bad"}, ErrorKind.BAD_REQUEST),
        (200, {"error": {"code": 429, "message": "upstream rate limit"}}, ErrorKind.RATE_LIMIT),
        (200, {"error": {"code": "overloaded", "message": "busy"}}, ErrorKind.SERVER),
        (200, {"choices": [{"message": "text"}]}, ErrorKind.EMPTY_CONTENT),
        (200, {"object": "chat.completion"}, ErrorKind.EMPTY_CONTENT),
        (200, "<html>gateway</html>", ErrorKind.SERVER),
    ],
)
def test_error_shapes_are_classified(status: int, body: Any, kind: ErrorKind) -> None:
    text = body if isinstance(body, str) else json.dumps(body)
    with pytest.raises(ChatError) as caught:
        parse_response(status, {}, text, SETTINGS)
    assert caught.value.kind is kind and caught.value.body == text and "\n" not in caught.value.message


def test_an_error_body_with_usage_still_counts_its_tokens() -> None:
    text = json.dumps(
        {"error": {"code": 502, "message": "cut"}, "usage": {"prompt_tokens": 7, "completion_tokens": 0}}
    )
    with pytest.raises(ChatError) as caught:
        parse_response(200, {}, text, SETTINGS)
    assert caught.value.spend.prompt_tokens == 7


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        (" 0.5 ", 0.5),
        ("0", 0.0),
        ("Wed, 21 Oct 2026 07:28:00 GMT", None),
        ("-1", None),
        ("inf", None),
    ],
)
def test_retry_after_accepts_delta_seconds_only(value: str, seconds: float | None) -> None:
    assert retry_after_seconds(httpx.Headers({"Retry-After": value})) == seconds


def test_a_secret_is_scrubbed_and_never_shown() -> None:
    secret = Secret("sk-or-v1-abcdefgh")
    assert "abcdefgh" not in repr(secret) and "abcdefgh" not in str(secret)
    assert secret.scrub("key=sk-or-v1-abcdefgh!") == "key=[REDACTED]!"
    assert Secret("ollama").scrub("ollama says hi") == "ollama says hi"  # placeholder, not a secret
    assert Secret(None).auth_headers() == {} and Secret("").auth_headers() == {}


@pytest.mark.anyio
async def test_the_fake_server_answers_100_requests_at_once() -> None:
    """Each reply waits 1 s: only a server that holds 100 requests at once has them all before answering."""
    answered: list[float] = []
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok("together", delay_s=1.0)
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=100)) as http:

            async def post() -> None:
                response = await http.post(
                    f"{server.base_url}/chat/completions", json={"model": "m"}, timeout=30
                )
                assert response.status_code == 200
                answered.append(time.perf_counter())

            async with anyio.create_task_group() as group:
                for _ in range(100):
                    group.start_soon(post)
        arrived = [request.received_at for request in server.requests]
    assert len(answered) == len(arrived) == 100
    assert max(arrived) < min(answered)


def test_reasoning_options_that_are_not_json_are_refused_in_the_settings() -> None:
    with pytest.raises(ValueError, match="reasoning must hold only JSON values"):
        LLMSettings(model="m", reasoning={"effort": "low", "max_tokens": float("nan")})
