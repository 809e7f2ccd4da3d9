"""The per-provider request limiter: in flight, rate and Retry-After, over real HTTP on loopback.

Clients come from ``AgentHttpClients`` as the arena makes them; the fake provider records when
each request arrived. Real sleeps stay well under 2 s; the token bucket's arithmetic is checked
exactly on an injected clock.
"""

from __future__ import annotations

import time

import anyio
import httpx
import pytest

from agents.llm.limiter import ProviderLimiter
from agents.llm.limits import ProviderLimits
from arena.engine.runtime.agent_http import AgentHttpClients
from tests.fakes.openai_server import FakeOpenAIServer, Reply

BODY = b'{"model": "m", "messages": []}'
JSON = {"content-type": "application/json"}


async def _post_all(clients: list[httpx.AsyncClient], url: str) -> list[int]:
    statuses: list[int] = []

    async def post(client: httpx.AsyncClient) -> None:
        statuses.append((await client.post(url, content=BODY, headers=JSON, timeout=10)).status_code)

    async with anyio.create_task_group() as group:
        for client in clients:
            group.start_soon(post, client)
    return statuses


def _arrivals(limits: ProviderLimits | None, agents: int, delay_s: float) -> list[float]:
    """When one request from each of ``agents`` clients reached the provider, in seconds after
    they were all sent (the fake runs in this process: its clock is ours)."""
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok("{}", delay_s=delay_s)

        async def run() -> float:
            async with AgentHttpClients() as http:
                clients = [http.new_client(limits) for _ in range(agents)]
                await _post_all(clients[:1], f"{server.base_url}/chat/completions")  # connections up
                server.requests.clear()
                started = time.perf_counter()
                assert await _post_all(clients, f"{server.base_url}/chat/completions") == [200] * agents
                return started

        started = anyio.run(run)
        return sorted(r.received_at - started for r in server.requests)


def test_in_flight_requests_to_one_provider_are_capped() -> None:
    free = _arrivals(None, 9, delay_s=0.3)
    assert free[-1] < 0.25  # the control: unlimited, all nine are at the provider at once
    capped = _arrivals(ProviderLimits(requests_per_second=1000, max_in_flight=3), 9, delay_s=0.3)
    # Three at a time: the fourth can only start once one of the first three was answered.
    assert all(capped[i + 3] - capped[i] >= 0.28 for i in range(6))
    assert capped[-1] >= 0.58


def test_requests_per_second_are_capped_after_a_burst_of_the_in_flight_window() -> None:
    limits = ProviderLimits(requests_per_second=10, max_in_flight=2)
    arrivals = _arrivals(limits, 6, delay_s=0.0)
    # The bucket holds two tokens and the warm-up spent one; then one token every 0.1 s: no request
    # arrives before its token (the i-th needs about i - 1 new ones).
    assert all(at >= (i - 1) * 0.1 - 0.01 for i, at in enumerate(arrivals))
    assert 0.39 <= arrivals[-1] < 1.5


def test_retry_after_holds_every_agent_calling_that_provider() -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply.error(429, "slow down", retry_after=0.6), Reply.ok("{}"), Reply.ok("{}"))
        url = f"{server.base_url}/chat/completions"
        limits = ProviderLimits(requests_per_second=100, max_in_flight=10)

        async def run() -> float:
            async with AgentHttpClients() as http:
                first, other = http.new_client(limits), http.new_client(limits)
                assert (await first.post(url, content=BODY, headers=JSON)).status_code == 429
                told = time.perf_counter()
                assert await _post_all([other, http.new_client(limits)], url) == [200, 200]
                return told

        told = anyio.run(run)
        later = [r.received_at - told for r in server.requests[1:]]
    assert len(later) == 2 and all(0.55 <= wait < 1.5 for wait in later)


def test_an_absurd_retry_after_holds_the_providers_other_agents_no_longer_than_max_pause_s() -> None:
    with FakeOpenAIServer() as server:
        server.script(
            Reply.error(429, "come back later", retry_after=99999999999), Reply.ok("{}"), Reply.ok("{}")
        )
        url = f"{server.base_url}/chat/completions"
        limits = ProviderLimits(requests_per_second=100, max_in_flight=10, max_pause_s=0.5)

        async def run() -> float:
            async with AgentHttpClients() as http:
                assert (
                    await http.new_client(limits).post(url, content=BODY, headers=JSON)
                ).status_code == 429
                told = time.perf_counter()
                others = [http.new_client(limits), http.new_client(limits)]
                with anyio.fail_after(10):  # the old limiter held them for 3,000 years
                    assert await _post_all(others, url) == [200, 200]
                return told

        told = anyio.run(run)
        later = [r.received_at - told for r in server.requests[1:]]
    assert len(later) == 2 and all(0.45 <= wait < 1.5 for wait in later)


def test_another_provider_is_not_held_by_ones_retry_after() -> None:
    with FakeOpenAIServer() as busy, FakeOpenAIServer() as calm:
        busy.script(Reply.error(503, "overloaded", retry_after=5))
        calm.script(Reply.ok("{}"))
        limits = ProviderLimits(requests_per_second=100, max_in_flight=10)

        async def run() -> float:
            async with AgentHttpClients() as http:
                client = http.new_client(limits)
                assert (
                    await client.post(f"{busy.base_url}/chat/completions", content=BODY)
                ).status_code == 503
                started = time.perf_counter()
                assert (
                    await client.post(f"{calm.base_url}/chat/completions", content=BODY)
                ).status_code == 200
                return time.perf_counter() - started

        assert anyio.run(run) < 1.0


class FakeTime:
    """A monotonic clock that only moves when the limiter sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_the_token_bucket_and_a_pause_on_an_injected_clock() -> None:
    clock = FakeTime()
    limiter = ProviderLimiter(ProviderLimits(2, 2), now=clock.time, sleep=clock.sleep)
    starts: list[float] = []

    async def run() -> None:
        for _ in range(5):
            async with limiter.slot():
                starts.append(clock.now)
        limiter.pause(3.0)
        async with limiter.slot():
            starts.append(clock.now)

    anyio.run(run)
    # Two at once (the window), then one per half second; the pause holds the next for 3 s.
    assert starts == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5, 4.5])


@pytest.mark.parametrize(("rate", "in_flight"), [(0, 1), (-1, 1), (1, 0)])
def test_limits_must_be_positive(rate: float, in_flight: int) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        ProviderLimits(rate, in_flight)


def test_a_limited_client_still_goes_through_the_environments_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limiter keeps every setting of a plain client, ``HTTP_PROXY`` among them: the request
    for an unresolvable host reaches the fake, which answers a proxy's absolute target with 404."""
    with FakeOpenAIServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)

        async def run() -> httpx.Response:
            async with AgentHttpClients() as http:
                client = http.new_client(ProviderLimits(requests_per_second=100, max_in_flight=1))
                return await client.post("http://provider.invalid/v1/chat/completions", content=BODY)

        response = anyio.run(run)
    assert response.status_code == 404
    assert "no route http://provider.invalid/v1/chat/completions" in response.text
