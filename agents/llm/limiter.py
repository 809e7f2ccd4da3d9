"""A request limiter per LLM provider: requests in flight, requests per second, and Retry-After.

A round asks all its agents at once (the cohort's ``concurrency``), and many agents of a cohort
usually share one provider. Left alone they would burst into the provider's limits, collect 429s
and retry together. The limiter makes the arena keep to the provider's limits instead:

- in flight: at most ``max_in_flight`` requests open at once; a request holds its slot until its
  response body has been read;
- rate: a token bucket refilled at ``requests_per_second`` and holding at most ``max_in_flight``
  tokens, so a whole in-flight window may start together and the sustained rate stays at the limit;
- Retry-After: a 429 or 503 carrying ``Retry-After`` (delta-seconds) holds every new request to
  that provider until it has passed, for at most ``max_pause_s``: one agent's answer saying "wait
  a day" must not stop the provider's other agents for a day. The answered request's own retry
  stays the client's business (``ChatClient`` waits the same time, within its ``max_wait_s``).

Providers are told apart by the origin (scheme, host, port) of the request, so agents using
different models at one provider share its limits. The limiter sits in the HTTP client of each
agent's client (``LimitedClient``), which leaves the chat client and its timeouts as they are:
time spent waiting for a slot counts toward the call's ``timeout_s``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from agents.llm.limits import ProviderLimits
from agents.llm.wire import retry_after_seconds

# Statuses whose Retry-After speaks for the whole provider (rate limited, overloaded).
_PROVIDER_BUSY = frozenset({429, 503})


class ProviderLimiter:
    """The limits of one provider, shared by every agent that calls it.

    ``now`` (seconds, monotonic) and ``sleep`` are injected so tests can drive time.
    """

    def __init__(
        self,
        limits: ProviderLimits,
        *,
        now: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self.limits = limits
        self._now = now
        self._sleep = sleep
        self._slots = anyio.Semaphore(limits.max_in_flight)
        self._admission = anyio.Lock()  # waiters are admitted one at a time, in arrival order
        self._tokens = float(limits.max_in_flight)
        self._refilled_at = now()
        self._paused_until = float("-inf")

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one in-flight slot, entered once the rate and any Retry-After pause allow."""
        async with self._slots:
            await self._admit()
            yield

    def pause(self, seconds: float) -> None:
        """Send nothing new to this provider for ``seconds`` (it answered with Retry-After)."""
        self._paused_until = max(self._paused_until, self._now() + seconds)

    async def _admit(self) -> None:
        async with self._admission:
            while (wait := self._wait()) > 0:
                await self._sleep(wait)
            self._tokens -= 1

    def _wait(self) -> float:
        """Seconds until a request may start (0: now)."""
        now = self._now()
        rate, capacity = self.limits.requests_per_second, self.limits.max_in_flight
        self._tokens = min(capacity, self._tokens + (now - self._refilled_at) * rate)
        self._refilled_at = now
        for_token = 0.0 if self._tokens >= 1 else (1 - self._tokens) / rate
        return max(self._paused_until - now, for_token)


class ProviderLimiters:
    """One ``ProviderLimiter`` per provider origin, all with the same limits (the cohort's)."""

    def __init__(self, limits: ProviderLimits) -> None:
        self.limits = limits
        self._by_origin: dict[tuple[str, str, int | None], ProviderLimiter] = {}

    def for_url(self, url: httpx.URL) -> ProviderLimiter:
        origin = (url.scheme, url.host, url.port)
        if origin not in self._by_origin:
            self._by_origin[origin] = ProviderLimiter(self.limits)
        return self._by_origin[origin]


class LimitedClient(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` that sends each request through its provider's limiter.

    A subclass rather than a transport of its own: a client given a transport ignores the
    environment's proxy settings, and this one keeps every setting of a plain client.
    """

    def __init__(self, limiters: ProviderLimiters, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._limiters = limiters

    async def send(self, request: httpx.Request, *, stream: bool = False, **kwargs: Any) -> httpx.Response:
        """Send within a slot of the provider's limiter, held until the body is read: for a
        streamed response (``markets.bounded`` reads them), until the response is closed."""
        limiter = self._limiters.for_url(request.url)
        slot = limiter.slot()
        await slot.__aenter__()
        try:
            response = await super().send(request, stream=stream, **kwargs)
        except BaseException:
            await slot.__aexit__(None, None, None)
            raise
        if stream and isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _ReleasingStream(response.stream, slot)
        else:
            await slot.__aexit__(None, None, None)
        if response.status_code in _PROVIDER_BUSY:
            wait = retry_after_seconds(response.headers)
            if wait is not None:
                limiter.pause(min(wait, self._limiters.limits.max_pause_s))
        return response


class _ReleasingStream(httpx.AsyncByteStream):
    """A response body that gives its limiter slot back when it is closed."""

    def __init__(self, inner: httpx.AsyncByteStream, slot: Any) -> None:
        self._inner, self._slot = inner, slot

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            slot, self._slot = self._slot, None
            if slot is not None:
                await slot.__aexit__(None, None, None)
