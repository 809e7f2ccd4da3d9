"""The shared layer of the HTTP venues: polite JSON requests, and the vocabulary of their payloads.

Every venue call goes through ``JsonApi``: a timeout on every read and an overall deadline on every
request, a decoded body of at most ``max_body_bytes`` (``markets.bounded``), a client-side sliding-window
rate limiter per endpoint (kept under the venue's published budget, because Cloudflare throttles
per window), and retries with exponential backoff and full jitter on 429, 5xx, transport errors,
timeouts and non-JSON bodies (an HTML challenge page or a truncated body is transient). A 429's
``Retry-After`` is honoured. Anything else (4xx) fails at once: retrying a bad request only
burns budget. The ``httpx.AsyncClient`` is injected so the composition root owns connections.

The payload helpers turn JSON values into exact domain values or fail with a one-line
``PayloadError`` naming the market, the field and what was expected. A price that is missing,
NaN, infinite, a bool or outside [0, 1] is refused — never replaced by a guess.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from typing import Any

import anyio
import httpx
import msgspec

from markets.bounded import BodyTooLarge, UnreadableBody, fetch_bounded
from markets.types import PRICE_PLACES

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]
Decode = Callable[[bytes], Any]  # a response body to its value; ValueError: not JSON (retried)
_JSON_BODY = {"Content-Type": "application/json"}  # request bodies are encoded once, as bytes
_PRICE_QUANTUM = Decimal(1).scaleb(-PRICE_PLACES)
_ZERO, _ONE = Decimal(0), Decimal(1)
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024  # a Gamma page or a /books batch is a few MB at most


class VenueHTTPError(Exception):
    """A request that failed for good: a non-retryable status, or retries exhausted."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class PayloadError(ValueError):
    """A venue payload that is not shaped as the venue documents it."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try, and how much to take. ``timeout`` bounds each step of a request (connect,
    read, write, pool), ``deadline`` the whole of one attempt, ``max_body_bytes`` its decoded body."""

    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    timeout: float = 15.0
    deadline: float = 60.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # A server asking us to wait longer than this is treated as an outage, not a pause.
    max_retry_after: float = 120.0


class RateLimiter:
    """At most ``calls`` acquisitions in any window of ``per`` seconds (a sliding-window log).

    Exact for sliding windows, unlike a token bucket, which can pass twice its rate across a
    window boundary. Uses the monotonic clock: this is pacing, not domain time.
    """

    def __init__(
        self,
        calls: int,
        per: float,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Sleep = anyio.sleep,
    ) -> None:
        if calls < 1 or per <= 0:
            raise ValueError(f"rate limit needs calls >= 1 and per > 0, got {calls} per {per}s")
        self.calls, self.per = calls, per
        self._monotonic, self._sleep = monotonic, sleep
        self._stamps: deque[float] = deque()
        self._lock = anyio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            while True:
                now = self._monotonic()
                while self._stamps and now - self._stamps[0] >= self.per:
                    self._stamps.popleft()
                if len(self._stamps) < self.calls:
                    self._stamps.append(now)
                    return
                await self._sleep(self._stamps[0] + self.per - now)


def budget(documented: int, per: float, share: float = 0.8) -> RateLimiter:
    """A limiter at ``share`` of a documented budget, leaving headroom for other clients on the IP."""
    return RateLimiter(max(1, int(documented * share)), per)


class JsonApi:
    """JSON GET/POST against one base URL with timeouts, rate limits and retries."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        *,
        policy: RetryPolicy | None = None,
        rng: random.Random | None = None,
        sleep: Sleep = anyio.sleep,
    ) -> None:
        self._client = client
        self.base_url = base_url.rstrip("/")
        self.policy = policy or RetryPolicy()
        self._rng = rng or random.Random()
        self._sleep = sleep

    async def get(
        self, path: str, limiter: RateLimiter, params: Any = None, *, decode: Decode | None = None
    ) -> Any:
        return await self._request("GET", path, limiter, params=params, decode=decode or decode_json)

    async def get_object_or_none(self, path: str, limiter: RateLimiter) -> dict[str, Any] | None:
        """A single resource as a JSON object, or None when the venue answers 404 (it does not
        know it, e.g. a delisted market): the caller decides what "gone" means."""
        try:
            payload = await self.get(path, limiter)
        except VenueHTTPError as exc:
            if exc.status == 404:
                return None
            raise
        return dict(as_object(payload, where=f"GET {path}"))

    async def post(self, path: str, limiter: RateLimiter, body: Any, *, decode: Decode | None = None) -> Any:
        return await self._request("POST", path, limiter, body=body, decode=decode or decode_json)

    async def _request(
        self,
        method: str,
        path: str,
        limiter: RateLimiter,
        *,
        decode: Decode,
        params: Any = None,
        body: Any = None,
    ) -> Any:
        url = f"{self.base_url}{path}"
        content = None if body is None else msgspec.json.encode(body)  # once, not once per attempt
        attempts, attempt = self.policy.attempts, 0
        while True:
            attempt += 1
            await limiter.acquire()
            outcome, retry_after = await self._attempt(method, url, params, content, decode)
            if isinstance(outcome, _Success):
                return outcome.value
            if attempt >= attempts:
                raise VenueHTTPError(f"{method} {url}: {outcome.reason}; gave up after {attempts} attempts")
            if retry_after is not None and retry_after > self.policy.max_retry_after:
                raise VenueHTTPError(
                    f"{method} {url}: {outcome.reason}; server asked to wait {retry_after:.0f}s, "
                    f"more than the {self.policy.max_retry_after:.0f}s allowed"
                )
            delay = self._delay(attempt, retry_after)
            log.warning(
                "%s %s: %s; retry %d/%d in %.2fs", method, url, outcome.reason, attempt, attempts - 1, delay
            )
            await self._sleep(delay)

    async def _attempt(
        self, method: str, url: str, params: Any, content: bytes | None, decode: Decode
    ) -> tuple[_Success | _Failure, float | None]:
        """One try: the decoded JSON, or why it failed and how long the server asked us to wait."""
        headers = None if content is None else _JSON_BODY
        policy = self.policy
        request = self._client.build_request(
            method, url, params=params, content=content, headers=headers, timeout=policy.timeout
        )
        try:
            response = await fetch_bounded(
                self._client, request, max_bytes=policy.max_body_bytes, deadline_s=policy.deadline
            )
        except BodyTooLarge as exc:  # asking again would fetch the same body: final
            raise VenueHTTPError(f"{method} {url}: {exc}") from None
        except TimeoutError:
            return _Failure(f"no complete answer within the {policy.deadline:g}s deadline"), None
        except httpx.TimeoutException as exc:
            return _Failure(f"timed out after {policy.timeout:g}s ({type(exc).__name__})"), None
        except httpx.TransportError as exc:
            return _Failure(f"transport error {type(exc).__name__}: {exc}"), None
        except UnreadableBody as exc:
            return _Failure(f"unreadable body: {exc}"), None
        status = response.status_code
        if status == 429 or status >= 500:
            return _Failure(f"HTTP {status}"), retry_after_seconds(response.headers)
        if status >= 400:
            raise VenueHTTPError(f"{method} {url}: HTTP {status} {_snippet(response.text)}", status=status)
        try:
            return _Success(decode(response.content)), None
        except ValueError:
            return _Failure(f"HTTP {status} body is not JSON: {_snippet(response.text)}"), None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Full jitter (AWS style); with Retry-After, that wait plus a little jitter so clients spread out."""
        if retry_after is not None:
            return retry_after + self._rng.uniform(0, self.policy.base_delay)
        ceiling = min(self.policy.max_delay, self.policy.base_delay * 2 ** (attempt - 1))
        return self._rng.uniform(0, ceiling)


@dataclass(frozen=True, slots=True)
class _Success:
    value: Any


@dataclass(frozen=True, slots=True)
class _Failure:
    reason: str


def decode_json(content: bytes) -> Any:
    """A response body as JSON (non-standard NaN and infinities kept as their text)."""
    return json.loads(content, parse_constant=_non_standard_constant)


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Retry-After as seconds: delta-seconds, or an HTTP-date measured against the response's Date."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            until, sent = parsedate_to_datetime(value), parsedate_to_datetime(headers.get("date", ""))
        except (TypeError, ValueError):
            return None
        seconds = (until - sent).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _non_standard_constant(token: str) -> str:
    """``NaN``/``Infinity``/``-Infinity`` are not JSON, yet venues send them: kept as their text,
    so the raw payload stays storable (strict JSON) and a price field holding one is still refused
    by ``probability`` as not finite, never read as a number."""
    return token


def _snippet(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def probability(value: object, *, where: str, field: str) -> Decimal:
    """A price/probability in [0, 1] from a JSON string or number.

    A decimal string is kept exactly as the venue wrote it. A JSON number is a binary float
    (Manifold's ``0.8958175225896258``): its digits past ``PRICE_PLACES`` are float noise that no
    fill or mark could store, so it is rounded (half even) to that many places.
    """
    number = _decimal(value, where=where, field=field)
    if not number.is_finite():
        raise PayloadError(f"{where}: {field} must be finite, got {value!r}")
    if not Decimal(0) <= number <= Decimal(1):
        raise PayloadError(f"{where}: {field} must be within [0, 1], got {value!r}")
    if isinstance(value, float) and -int(number.as_tuple().exponent) > PRICE_PLACES:
        return number.quantize(_PRICE_QUANTUM, rounding=ROUND_HALF_EVEN)
    return number


def plain_probabilities(values: Sequence[object]) -> list[Decimal] | None:
    """The values when every one is a decimal string within [0, 1], the venues' usual format (as
    ``probability`` reads them); None for anything else, for the caller to read one by one with
    ``probability``, whose error names the culprit. A sync reads tens of thousands of prices, and
    this skips building an error context for each."""
    if not all(type(value) is str for value in values):
        return None
    try:
        numbers = [Decimal(value) for value in values if isinstance(value, str)]  # all of them
        if numbers and not (min(numbers) >= _ZERO and max(numbers) <= _ONE):
            return None  # infinities; a NaN raises
    except ArithmeticError:
        return None
    return numbers


def amount(value: object, field: str, *, where: str) -> Decimal | None:
    """A non-negative volume/liquidity figure, or None when the venue leaves it out."""
    if value is None or value == "":
        return None
    number = _decimal(value, where=where, field=field)
    if not number.is_finite() or number < 0:
        raise PayloadError(f"{where}: {field} must be a finite non-negative number, got {value!r}")
    return number


def _decimal(value: object, *, where: str, field: str) -> Decimal:
    """A JSON decimal string or number as a ``Decimal`` (NaN and infinities included: callers judge).

    A float goes through its shortest ``repr`` (``0.1`` -> ``Decimal("0.1")``), which is the text
    the venue sent, rather than its binary expansion.
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise PayloadError(f"{where}: {field} must be a number or decimal string, got {value!r}")
    try:
        return Decimal(value.strip()) if isinstance(value, str) else Decimal(repr(value))
    except InvalidOperation:
        raise PayloadError(f"{where}: {field} must be a decimal number, got {value!r}") from None


def iso_time(value: object, *, where: str, field: str) -> datetime | None:
    """An ISO 8601 time in any of the venues' spellings; date-only values mean 00:00 UTC."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PayloadError(f"{where}: {field} must be an ISO 8601 string, got {value!r}")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise PayloadError(f"{where}: {field} must be an ISO 8601 time, got {value!r}") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def epoch_time(value: object, *, where: str, field: str, millis: bool) -> datetime | None:
    """Unix time in seconds (Polymarket CLOB) or milliseconds (Manifold) as aware UTC."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PayloadError(f"{where}: {field} must be a Unix time number, got {value!r}")
    return datetime.fromtimestamp(value / 1000 if millis else value, UTC)


def require(payload: Mapping[str, Any], key: str, kind: type | tuple[type, ...], *, where: str) -> Any:
    """``payload[key]`` if present and of ``kind``; otherwise a PayloadError naming the field."""
    value = payload.get(key)
    is_stray_bool = isinstance(value, bool) and bool not in _as_tuple(kind)
    if value is None or is_stray_bool or not isinstance(value, kind):
        raise PayloadError(f"{where}: field {key!r} must be {_kind_name(kind)}, got {value!r}")
    return value


def as_object(payload: object, *, where: str) -> Mapping[str, Any]:
    if not isinstance(payload, dict):
        raise PayloadError(f"{where}: expected a JSON object, got {type(payload).__name__}")
    return payload


def as_list(payload: object, *, where: str) -> list[Any]:
    if not isinstance(payload, list):
        raise PayloadError(f"{where}: expected a JSON array, got {type(payload).__name__}")
    return payload


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        dict: "an object",
        list: "an array",
    }
    return " or ".join(names.get(k, k.__name__) for k in _as_tuple(kind))
