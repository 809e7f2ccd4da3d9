"""The shared HTTP layer (markets.http) against the fake Polymarket on loopback: retries, backoff,
Retry-After, timeouts, malformed bodies, non-retryable errors, and the sliding-window limiter."""

from __future__ import annotations

import logging
import random
import re
import time

import httpx
import pytest

from markets.http import JsonApi, RateLimiter, RetryPolicy, VenueHTTPError, retry_after_seconds
from tests.fakes.polymarket_server import FakePolymarket, real_market
from tests.fakes.venue_server import Fault

pytestmark = pytest.mark.anyio
FAST = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05, timeout=2.0)


class Sleeps:
    """Records the waits asked for (the transport stays real; only waiting is skipped)."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


@pytest.fixture
def fake():
    with FakePolymarket() as venue:
        venue.add(real_market(0))
        yield venue


async def _get(fake: FakePolymarket, policy: RetryPolicy = FAST, sleep: Sleeps | None = None) -> object:
    async with httpx.AsyncClient() as client:
        api = JsonApi(
            client, fake.url, policy=policy, rng=random.Random(1), **({"sleep": sleep} if sleep else {})
        )
        return await api.get("/markets/560000", RateLimiter(100, 1))


async def test_429_is_retried_after_the_retry_after_seconds(fake: FakePolymarket, caplog) -> None:
    fake.fail("/markets/560000", Fault(status=429, retry_after="7"))
    sleeps = Sleeps()
    with caplog.at_level(logging.WARNING, logger="markets.http"):
        payload = await _get(fake, sleep=sleeps)
    assert isinstance(payload, dict) and payload["id"] == "560000"
    assert len(sleeps.asked) == 1 and 7 <= sleeps.asked[0] <= 7 + FAST.base_delay
    assert len(fake.requests_to("/markets/560000")) == 2
    assert "HTTP 429; retry 1/3" in caplog.text


async def test_retry_after_really_waits(fake: FakePolymarket) -> None:
    fake.fail("/markets/560000", Fault(status=429, retry_after="1"))
    started = time.monotonic()
    await _get(fake)
    assert time.monotonic() - started >= 1.0


async def test_server_errors_back_off_exponentially_then_succeed(fake: FakePolymarket) -> None:
    fake.fail("/markets/560000", Fault(status=503), times=2)
    sleeps = Sleeps()
    policy = RetryPolicy(attempts=5, base_delay=1.0, max_delay=30.0, timeout=2.0)
    await _get(fake, policy, sleeps)
    assert len(sleeps.asked) == 2
    assert 0 <= sleeps.asked[0] <= 1.0 and 0 <= sleeps.asked[1] <= 2.0  # full jitter under 1 s, then 2 s


async def test_exhausted_retries_raise_one_line_naming_the_request(fake: FakePolymarket) -> None:
    fake.fail("/markets/560000", Fault(status=500), times=10)
    with pytest.raises(VenueHTTPError) as err:
        await _get(fake)
    assert str(err.value) == f"GET {fake.url}/markets/560000: HTTP 500; gave up after 4 attempts"
    assert len(fake.requests_to("/markets/560000")) == 4


async def test_timeouts_are_retried(fake: FakePolymarket) -> None:
    fake.fail("/markets/560000", Fault(delay=1.0))
    policy = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, timeout=0.2)
    payload = await _get(fake, policy)
    assert isinstance(payload, dict) and payload["id"] == "560000"
    fake.fail("/markets/560000", Fault(delay=1.0), times=3)
    with pytest.raises(
        VenueHTTPError, match=r"timed out after 0.2s \(ReadTimeout\); gave up after 3 attempts"
    ):
        await _get(fake, policy)


async def test_malformed_json_is_retried_then_reported(fake: FakePolymarket) -> None:
    fake.fail("/markets/560000", Fault(body=b'{"id": "560000", "question": '))
    assert isinstance(await _get(fake), dict)
    fake.fail("/markets/560000", Fault(body=b"<html>Just a moment...</html>"), times=4)
    with pytest.raises(VenueHTTPError, match=re.escape("body is not JSON: <html>Just a moment...</html>")):
        await _get(fake)


async def test_client_errors_are_not_retried(fake: FakePolymarket) -> None:
    with pytest.raises(VenueHTTPError, match="HTTP 404") as err:
        async with httpx.AsyncClient() as client:
            await JsonApi(client, fake.url, policy=FAST).get("/markets/1", RateLimiter(10, 1))
    assert err.value.status == 404 and len(fake.requests_to("/markets/1")) == 1


async def test_a_retry_after_beyond_the_allowed_wait_is_an_outage(fake: FakePolymarket) -> None:
    fake.fail("/markets/560000", Fault(status=429, retry_after="3600"))
    with pytest.raises(VenueHTTPError, match="server asked to wait 3600s, more than the 120s allowed"):
        await _get(fake, sleep=Sleeps())


def test_retry_after_accepts_http_dates_measured_against_the_response_date() -> None:
    headers = httpx.Headers(
        {"Retry-After": "Wed, 21 Oct 2026 07:28:30 GMT", "Date": "Wed, 21 Oct 2026 07:28:00 GMT"}
    )
    assert retry_after_seconds(headers) == 30.0
    assert retry_after_seconds(httpx.Headers({"Retry-After": "2"})) == 2.0
    assert retry_after_seconds(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None


async def test_rate_limiter_allows_at_most_calls_per_sliding_window() -> None:
    clock = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock[0] += seconds

    limiter = RateLimiter(3, 10.0, monotonic=lambda: clock[0], sleep=sleep)
    stamps = []
    for _ in range(7):
        await limiter.acquire()
        stamps.append(clock[0])
        clock[0] += 1.0
    assert stamps == [0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 20.0]
    assert all(sum(1 for s in stamps if start <= s < start + 10) <= 3 for start in stamps)


async def test_real_limiter_paces_concurrent_requests(fake: FakePolymarket) -> None:
    limiter = RateLimiter(5, 0.5)
    started = time.monotonic()
    async with httpx.AsyncClient() as client:
        api = JsonApi(client, fake.url, policy=FAST)
        for _ in range(11):
            await api.get("/markets/560000", limiter)
    assert time.monotonic() - started >= 1.0  # 11 calls at 5 per 0.5 s need two full windows
