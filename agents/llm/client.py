"""One chat-completions call over an injected ``httpx.AsyncClient``, with transport retries.

Only 429 and 5xx (and dropped connections) are retried: they are the provider's trouble and
usually pass. 401/402/400 are configuration problems that a retry cannot fix, and a timeout
has already spent ``timeout_s``, which bounds the whole exchange (a server trickling its body
is cut there). A body past ``max_response_bytes`` is cut as it streams (``markets.bounded``)
and fails the request for good: asking again would fetch the same. Every attempt's tokens and
cost go into the meter, so a decision's cost includes the calls that failed (the peer arena
undercounted exactly these); the meter also tells its ``recorder`` of each one as soon as it
answered (``AgentView.on_request``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import anyio
import httpx

from agents.llm.endpoint import Endpoint
from agents.llm.errors import ChatError, ErrorKind, Spend
from agents.llm.secret import Secret
from agents.llm.settings import LLMSettings
from agents.llm.wire import ChatMessage, Completion, encode_request, parse_response
from agents.tools import ToolSpec
from agents.types import RequestRecorder, RequestUsage
from markets.bounded import BodyTooLarge, UnreadableBody, fetch_bounded

log = logging.getLogger(__name__)
CHAT_PATH = "/chat/completions"


@dataclass(slots=True)
class Meter:
    """Running totals over every HTTP request of one decision, and each request's own usage;
    ``recorder`` hears of each request as it is added."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    requests: int = 0
    log: list[RequestUsage] = field(default_factory=list)
    recorder: RequestRecorder | None = None

    async def add(self, spend: Spend, *, latency_s: float = 0.0, outcome: str = "answer") -> None:
        self.prompt_tokens += spend.prompt_tokens
        self.completion_tokens += spend.completion_tokens
        self.cost_usd += spend.cost_usd
        usage = RequestUsage(spend.prompt_tokens, spend.completion_tokens, spend.cost_usd, latency_s, outcome)
        self.log.append(usage)
        if self.recorder is not None:
            await self.recorder(len(self.log), usage)


class ChatClient:
    """Sends messages to ``{base_url}/chat/completions``; returns a Completion or raises ChatError.

    Everything that comes back (bodies, exception text) is scrubbed of the key before it is
    logged, raised or returned.
    """

    def __init__(
        self,
        agent_name: str,
        settings: LLMSettings,
        http: httpx.AsyncClient,
        secret: Secret,
        endpoint: Endpoint | None = None,
    ) -> None:
        """``endpoint``: the resolved URL and headers (``Endpoint.resolve``); without one, the
        settings' own, which then may hold no ``env:`` reference."""
        self._agent = agent_name
        self._settings = settings
        self._http = http
        self._secret = secret
        endpoint = endpoint or Endpoint.resolve(settings.base_url, settings.extra_headers, {}, path=CHAT_PATH)
        self._url = httpx.URL(endpoint.url)  # parsed once, not per call
        # Lower-cased, so that a user's own content-type replaces ours instead of doubling it.
        self._headers = {"content-type": "application/json"} | {
            name.lower(): value for name, value in endpoint.headers.items()
        }

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        meter: Meter,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        body = encode_request(self._settings, messages, schema, tools)
        attempt = 0
        while True:
            try:
                return await self._send_once(body, meter)
            except ChatError as error:
                wait = self._wait_before_retry(error, attempt)
                if wait is None:
                    raise
                log.warning(
                    "agent %s: %s (%s); retry %d/%d in %.1f s",
                    self._agent,
                    error.kind.value,
                    error.message,
                    attempt + 1,
                    self._settings.transport_retries,
                    wait,
                )
                await anyio.sleep(wait)
                attempt += 1

    def _wait_before_retry(self, error: ChatError, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when the error is final.

        Retry-After when the server gave one (and it is within max_wait_s), else exponential
        backoff capped at max_wait_s.
        """
        if not error.kind.retriable or attempt >= self._settings.transport_retries:
            return None
        limit = self._settings.max_wait_s
        if error.retry_after_s is None:
            return min(self._settings.backoff_s * 2.0**attempt, limit)
        if error.retry_after_s > limit:
            error.message += f" (Retry-After {error.retry_after_s:g} s exceeds max_wait_s {limit:g})"
            return None
        return error.retry_after_s

    async def _send_once(self, body: bytes, meter: Meter) -> Completion:
        meter.requests += 1
        headers = {**self._headers, **self._secret.auth_headers()}
        settings = self._settings
        timeout = settings.timeout_s
        request = self._http.build_request("POST", self._url, content=body, headers=headers, timeout=timeout)
        started = time.perf_counter()
        try:
            response = await fetch_bounded(
                self._http, request, max_bytes=settings.max_response_bytes, deadline_s=timeout
            )
        except (TimeoutError, httpx.TimeoutException):
            await meter.add(Spend(), latency_s=time.perf_counter() - started, outcome=ErrorKind.TIMEOUT.value)
            raise ChatError(ErrorKind.TIMEOUT, f"no answer within timeout_s={timeout:g}") from None
        except BodyTooLarge:
            await meter.add(
                Spend(), latency_s=time.perf_counter() - started, outcome=ErrorKind.TOO_LARGE.value
            )
            raise ChatError(
                ErrorKind.TOO_LARGE,
                f"the response body exceeds max_response_bytes={settings.max_response_bytes:,} "
                "(decoded); it was not read further",
            ) from None
        except (httpx.TransportError, UnreadableBody) as exc:
            await meter.add(Spend(), latency_s=time.perf_counter() - started, outcome=ErrorKind.SERVER.value)
            detail = self._secret.scrub(f"{type(exc).__name__}: {exc}")
            raise ChatError(ErrorKind.SERVER, f"connection failed: {detail}") from None
        text = self._secret.scrub(response.text)
        latency = time.perf_counter() - started
        try:
            completion = parse_response(response.status_code, response.headers, text, settings)
        except ChatError as error:
            await meter.add(error.spend, latency_s=latency, outcome=error.kind.value)
            raise
        await meter.add(
            completion.spend, latency_s=latency, outcome="tool_calls" if completion.tool_calls else "answer"
        )
        return completion
