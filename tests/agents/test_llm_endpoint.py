"""Secrets an LLM agent's config may only name: headers and query values as ``env:NAME``
references, no ``user:password@`` in ``base_url``; what goes on the wire is resolved from the
environment, and whatever comes back is scrubbed of every secret, echoed whole or in part."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from agents.llm.endpoint import display_headers, display_url
from agents.llm.secret import REDACTED, Secret
from agents.llm.settings import LLMSettings
from agents.registry import AgentConfigError, build_bettor, validate_agent
from tests.agents.corpus.world import view
from tests.fakes.openai_server import FakeOpenAIServer, Reply

KEY = "sk-or-v1-0123456789abcdef0123456789abcdef"
GOOG = "AIzaSyD-goog-secret-42"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"extra_headers": {"Cookie": "session=abc123"}},
            "the value of 'Cookie' must name an environment variable",
        ),
        ({"extra_headers": {"X-Goog-Api-Key": GOOG}}, "the value of 'X-Goog-Api-Key' must name"),
        ({"extra_headers": {"Authorization": "env:TOKEN"}}, "must not carry credentials (Authorization)"),
        ({"extra_headers": {"X-Bad\r\nInjected": "1"}}, "is not a valid header"),
        (
            {"base_url": "https://user:pw@llm.example/v1"},
            "base_url must not carry credentials (user:password@)",
        ),
        ({"base_url": f"https://llm.example/v1?api_key={KEY}"}, "the query parameter 'api_key' must name"),
        ({"base_url": "https://llm.example/v1#part"}, "must not have a #fragment"),
        ({"base_url": "https://llm.example:99999/v1"}, "base_url is not a valid URL"),
    ],
)
def test_a_secret_written_into_the_config_is_refused_without_being_repeated(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        LLMSettings.model_validate({"model": "m", **changes})
    with pytest.raises(AgentConfigError, match=re.escape(message)) as caught:  # as a launch reports it
        validate_agent("llm", {"model": "m", "api_key_env": "", **changes}, environ={})
    assert not any(secret in str(caught.value) for secret in ("abc123", GOOG, "pw@", KEY))


def test_references_and_harmless_values_are_accepted() -> None:
    settings = LLMSettings(
        model="m",
        base_url="https://llm.example/openai/?api-version=2024-02-01&key=env:QUERY_KEY",
        extra_headers={
            "X-Goog-Api-Key": "env:GOOG_KEY",
            "HTTP-Referer": "https://me.example",
            "X-Title": "arena",
        },
    )
    assert settings.base_url == "https://llm.example/openai?api-version=2024-02-01&key=env:QUERY_KEY"


def test_a_reference_to_an_unset_variable_fails_the_launch_check() -> None:
    settings = {"model": "m", "api_key_env": "K", "extra_headers": {"X-Goog-Api-Key": "env:GOOG_KEY"}}
    with pytest.raises(AgentConfigError, match="environment variable 'GOOG_KEY'"):
        validate_agent("llm", settings, environ={"K": KEY})
    validate_agent("llm", settings, environ={"K": KEY, "GOOG_KEY": GOOG})


def test_an_old_config_with_userinfo_cannot_build_an_agent() -> None:
    """``user:pw@`` would be sent as Basic auth in place of the Bearer key: never built."""
    settings = {"model": "m", "base_url": "https://user:hunter2pw@llm.example/v1", "api_key_env": "K"}
    with pytest.raises(AgentConfigError, match="must not carry credentials") as caught:
        build_bettor("a", "llm", settings, seed=0, environ={"K": KEY}, new_http_client=httpx.AsyncClient)
    assert "hunter2pw" not in str(caught.value)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.mark.anyio
async def test_references_are_resolved_on_the_wire_and_the_query_keeps_its_place(
    http: httpx.AsyncClient,
) -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply.ok("{}"))
        settings = {
            "model": "m",
            "api_key_env": "K",
            "invalid_retries": 0,
            "base_url": f"{server.base_url}?api-version=2024-02-01&sig=env:QUERY_KEY",
            "extra_headers": {"X-Goog-Api-Key": "env:GOOG_KEY"},
        }
        environ = {"K": KEY, "GOOG_KEY": GOOG, "QUERY_KEY": "q-secret-99"}
        bettor = build_bettor("a", "llm", settings, seed=0, environ=environ, new_http_client=lambda: http)
        await bettor.decide(view())
    (request,) = server.requests
    assert request.path == "/v1/chat/completions?api-version=2024-02-01&sig=q-secret-99"
    assert request.headers["x-goog-api-key"] == GOOG
    assert request.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "echo",
    [KEY, KEY.removeprefix("sk-"), KEY[10:22], f"{KEY[:12]}…{KEY[-12:]}", GOOG, GOOG[4:14]],
    ids=["whole", "without-prefix", "12-chars", "ends", "header", "header-part"],
)
async def test_a_provider_echoing_any_part_of_a_secret_has_it_scrubbed(
    http: httpx.AsyncClient, echo: str
) -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply.error(401, f"invalid credentials {echo} for this org"))
        settings = {"model": "m", "api_key_env": "K", "base_url": server.base_url}
        settings["extra_headers"] = {"X-Goog-Api-Key": "env:GOOG_KEY"}
        environ = {"K": KEY, "GOOG_KEY": GOOG}
        decision = await build_bettor(
            "a", "llm", settings, seed=0, environ=environ, new_http_client=lambda: http
        ).decide(view())
    stored = f"{decision.error} {decision.raw_response}"
    assert decision.error_kind == "auth" and REDACTED in stored
    for secret in (KEY, GOOG):
        pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
        assert not any(piece in stored for piece in pieces), stored


def test_scrubbing_leaves_text_without_a_secret_alone() -> None:
    secret = Secret(KEY, [GOOG])
    text = "the model says: sk- is a prefix, 0123456 is short; 0123456789 is not"
    assert secret.scrub(text) == f"the model says: sk- is a prefix, 0123456 is short; {REDACTED} is not"
    assert secret.scrub("plain words only") == "plain words only"
    assert Secret("ollama").scrub("ollama says hi") == "ollama says hi"


def test_what_may_be_shown_of_a_stored_config() -> None:
    stored = {"Cookie": "session=abc", "X-Title": "arena", "X-Goog-Api-Key": "env:GOOG_KEY", "X-Other": 7}
    assert display_headers(stored) == {
        "Cookie": "[REDACTED]",
        "X-Title": "arena",
        "X-Goog-Api-Key": "env:GOOG_KEY",
        "X-Other": "[REDACTED]",
    }
    url = f"https://user:pw@llm.example/v1?api_key={KEY}&api-version=2024&k=env:K#frag"
    assert display_url(url) == "https://[REDACTED]@llm.example/v1?api_key=[REDACTED]&api-version=2024&k=env:K"
