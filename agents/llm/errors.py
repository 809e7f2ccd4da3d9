"""Why an LLM call produced no usable decision, in a small fixed vocabulary.

The kinds are stored in ``decision.error_kind`` so that reports can tell a billing outage
(``payment`` for every agent) from a model that cannot follow the output format.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum


class ErrorKind(StrEnum):
    TIMEOUT = "timeout"  # no complete answer within timeout_s
    AUTH = "auth"  # 401/403: missing or wrong key
    PAYMENT = "payment"  # 402: out of credit
    RATE_LIMIT = "rate_limit"  # 429 after every transport retry
    SERVER = "server"  # 5xx, connection failure or malformed response, after every retry
    BAD_REQUEST = "bad_request"  # 400 and any other status: a config problem, never retried
    EMPTY_CONTENT = "empty_content"  # the model answered nothing
    LENGTH = "length"  # finish_reason=length: the answer was cut at max_tokens
    INVALID_OUTPUT = "invalid_output"  # an answer that fails the output schema or the rules
    TOOL_LOOP = "tool_loop"  # the model kept calling tools after it was told its budget was spent
    TOO_LARGE = "response_too_large"  # a body past max_response_bytes: cut, never retried
    INVALID_USAGE = "invalid_usage"  # usage (cost, tokens) out of range: recorded, never retried

    @property
    def retriable(self) -> bool:
        """Transport failures worth sending the same request again (with backoff)."""
        return self in (ErrorKind.RATE_LIMIT, ErrorKind.SERVER)


@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens and dollars of one HTTP exchange, counted even when the exchange failed."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal = Decimal(0)


class ChatError(Exception):
    """A chat-completions request that failed; ``body`` is the response text, if any."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        body: str | None = None,
        *,
        retry_after_s: float | None = None,
        spend: Spend | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.body = body
        self.retry_after_s = retry_after_s
        self.spend = spend or Spend()
