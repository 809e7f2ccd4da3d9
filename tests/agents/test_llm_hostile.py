"""A hostile provider costs one attempt's error, never the process's memory or the round's time.

A body inflating past ``max_response_bytes``, a huge plain body and a trickle of one byte at a
time each end as that request's recorded error; the agent holds. Real HTTP on loopback
(``tests.fakes.hostile_server``); peak memory read with ``tracemalloc``.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import AsyncIterator

import httpx
import pytest

from agents.llm.bettor import LLMBettor
from agents.llm.settings import LLMSettings
from agents.types import Decision
from tests.agents.corpus.world import view
from tests.fakes.hostile_server import Abuse, Bomb, Drip, HostileServer, Huge
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.anyio
LIMIT = 256 * 1024


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


async def decide_against(
    abuse: Abuse, http: httpx.AsyncClient, **changes: object
) -> tuple[Decision, int, int]:
    """The decision against a server sending ``abuse``, the peak of Python memory meanwhile, and
    how many requests the server answered."""
    with HostileServer(abuse) as server:
        settings = LLMSettings(
            model="test/model",
            base_url=f"{server.url}/v1",
            max_response_bytes=LIMIT,
            backoff_s=0.01,
            **changes,  # type: ignore[arg-type]
        )
        tracemalloc.start()
        try:
            decision = await LLMBettor("gpt", settings, http, "test-key-123").decide(view())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return decision, peak, server.requests


@pytest.mark.timeout(60)
async def test_a_gzip_bomb_is_that_attempts_error_and_the_agent_holds(http: httpx.AsyncClient) -> None:
    decision, peak, requests = await decide_against(Bomb(inflated=1024**3), http)
    assert decision.error_kind == "response_too_large" and not decision.actions
    assert decision.error == (
        "the response body exceeds max_response_bytes=262,144 (decoded); it was not read further"
    )
    assert [r.outcome for r in decision.usage.requests] == ["response_too_large"]
    assert requests == 1  # never retried: the same request would fetch the same body
    assert peak < 8 * 1024 * 1024, f"peak {peak:,} bytes"


@pytest.mark.timeout(60)
async def test_a_huge_plain_body_is_that_attempts_error(http: httpx.AsyncClient) -> None:
    decision, peak, _ = await decide_against(Huge(size=300 * 1024 * 1024, declared=False), http)
    assert decision.error_kind == "response_too_large" and not decision.actions
    assert decision.raw_response is None  # nothing of the body is kept
    assert peak < 8 * 1024 * 1024, f"peak {peak:,} bytes"


@pytest.mark.timeout(60)
async def test_a_trickling_body_ends_at_timeout_s(http: httpx.AsyncClient) -> None:
    started = time.monotonic()
    decision, _, _ = await decide_against(Drip(interval=0.1), http, timeout_s=1.0, transport_retries=0)
    assert decision.error_kind == "timeout" and decision.error == "no answer within timeout_s=1"
    assert time.monotonic() - started < 5


async def test_a_long_raw_answer_is_kept_as_its_size_and_sha256(http: httpx.AsyncClient) -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply.ok("x" * 5000))
        settings = LLMSettings(
            model="m", base_url=server.base_url, max_raw_kept_chars=1024, invalid_retries=0
        )
        decision = await LLMBettor("gpt", settings, http, None).decide(view())
    assert decision.error_kind == "invalid_output"
    assert decision.raw_response is not None and decision.raw_response.startswith("[not kept: ")
    assert "sha256" in decision.raw_response and len(decision.raw_response) < 200
