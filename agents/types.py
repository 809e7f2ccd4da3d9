"""The contract between the arena and a bettor: what an agent sees and what it answers.

Agents never see the database: the arena hands them an ``AgentView`` built from the round's
snapshot and the agent's ledger, and stores the ``Decision`` they return.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Protocol, runtime_checkable

from agents.tools import Toolbox, ToolCallRecord
from markets.types import MarketSnapshot
from portfolio.actions import Action
from portfolio.rules import Rules
from portfolio.units import MarketId, Money, Price, Shares


@dataclass(frozen=True, slots=True)
class PositionView:
    """One open position as the agent sees it, valued at the latest mark."""

    position_id: str
    market_id: MarketId
    outcome: str
    shares: Shares
    cost_basis: Money
    mark_price: Price | None
    value: Money
    stale: bool = False
    market_open: bool = True  # False: closed for trading but not yet resolved
    # The market's question, so a position in a market no longer in the snapshot is still legible.
    question: str | None = None


@dataclass(frozen=True, slots=True)
class PortfolioView:
    cash: Money
    max_bet: Money
    positions: tuple[PositionView, ...] = ()

    @property
    def total_value(self) -> Money:
        return Money(self.cash + sum((p.value for p in self.positions), Decimal(0)))


@dataclass(frozen=True, slots=True)
class AgentView:
    """Everything an agent may use for one decision; the same snapshot for every agent of a round."""

    agent_id: str
    cohort_id: str
    round_index: int
    now: datetime
    rules: Rules
    portfolio: PortfolioView
    snapshot: MarketSnapshot
    # Whether market prices are shown to this agent this round (cohort price-visibility setting).
    prices_visible: bool = True
    # For ensemble agents only: other agents' stated probabilities in this round,
    # agent name -> market id -> outcome -> probability.
    peer_probabilities: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict)
    # Decision time (``now``) of the cohort's previous round; None for the first round. Lets
    # stateless bettors (scripted replays) know exactly which time window this round covers.
    previous_round_at: datetime | None = None
    # Research tools answering as of ``now`` (arena/tools/); None where the arena offers none.
    toolbox: Toolbox | None = None
    # Told of each provider request (1-based, in order) as soon as it answered, before the
    # decision is returned, so the arena records what was paid even if it never stores the
    # decision (its process killed mid-decision). None: nobody listens.
    on_request: RequestRecorder | None = None


# What one provider request may plausibly cost (docs/limits-and-safety.md "Limits"): a figure past
# these is the provider's error, recorded as the request's error and counted at the ceiling.
MAX_REQUEST_COST_USD = Decimal(1000)
MAX_REQUEST_TOKENS = 10_000_000
# What one decision may hold in all: its token totals fit a 32-bit column.
MAX_DECISION_TOKENS = 2_000_000_000
MAX_DECISION_REQUESTS = 10_000


def spend_problem(prompt_tokens: object, completion_tokens: object, cost_usd: object) -> str | None:
    """Why one request's reported usage is not plausible (None: it is): token counts must be
    whole numbers in [0, ``MAX_REQUEST_TOKENS``], the cost a finite number of dollars in
    [0, ``MAX_REQUEST_COST_USD``]."""
    for name, tokens in (("prompt_tokens", prompt_tokens), ("completion_tokens", completion_tokens)):
        if not _whole(tokens, MAX_REQUEST_TOKENS):
            return f"usage.{name} must be a whole number in [0, {MAX_REQUEST_TOKENS:,}], got {_shown(tokens)}"
    if not _dollars(cost_usd, MAX_REQUEST_COST_USD):
        return (
            f"usage.cost must be a number of dollars in [0, {MAX_REQUEST_COST_USD}], got {_shown(cost_usd)}"
        )
    return None


def _whole(value: object, most: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most


def _dollars(value: object, most: Decimal) -> bool:
    """A finite Decimal (or int) in [0, most]; checked for finiteness first, since comparing a NaN raises."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        return False
    return Decimal(value).is_finite() and 0 <= value <= most


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


@dataclass(frozen=True, slots=True)
class RequestUsage:
    """Tokens, cost and latency of one provider request of a decision; ``outcome`` is ``answer``,
    ``tool_calls`` or the error kind of a failed request."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_s: float = 0.0
    outcome: str = "answer"


RequestRecorder = Callable[[int, RequestUsage], Awaitable[None]]
"""Hears of a decision's provider request ``seq`` (1-based) with its usage (``AgentView.on_request``)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Cost of producing a decision, summed over every attempt; ``requests`` lists each one."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_s: float = 0.0
    attempts: int = 0
    requests: tuple[RequestUsage, ...] = ()

    def problem(self) -> str | None:
        """Why these figures cannot be recorded as given (None: they can): any request's own
        problem (``spend_problem``), or totals past what one decision may hold."""
        if not _whole(self.attempts, MAX_DECISION_REQUESTS) or len(self.requests) > MAX_DECISION_REQUESTS:
            return f"usage.attempts must be a whole number in [0, {MAX_DECISION_REQUESTS:,}]"
        for request in self.requests:
            if found := spend_problem(request.prompt_tokens, request.completion_tokens, request.cost_usd):
                return found
        requests = max(1, self.attempts, len(self.requests))
        if not _dollars(self.cost_usd, MAX_REQUEST_COST_USD * requests):
            return (
                f"usage.cost of {requests} request(s) must be a number of dollars in "
                f"[0, {MAX_REQUEST_COST_USD * requests}], got {_shown(self.cost_usd)}"
            )
        for name, total in (
            ("prompt_tokens", self.prompt_tokens),
            ("completion_tokens", self.completion_tokens),
        ):
            if not _whole(total, MAX_DECISION_TOKENS):
                limit = f"[0, {MAX_DECISION_TOKENS:,}]"
                return f"usage.{name} of the decision must be in {limit}, got {_shown(total)}"
        if not isinstance(self.latency_s, int | float) or not 0 <= self.latency_s < float("inf"):
            return f"usage.latency_s must be a finite number of seconds, got {_shown(self.latency_s)}"
        return None

    def counted(self) -> Usage:
        """What is recorded of usage that has a ``problem``: no tokens, and the cost at its
        ceiling for every request (unknown, so a budget cap still stops the agent)."""
        attempts = self.attempts if _whole(self.attempts, MAX_DECISION_REQUESTS) else 0
        requests = max(1, attempts, min(len(self.requests), MAX_DECISION_REQUESTS))
        return Usage(cost_usd=MAX_REQUEST_COST_USD * requests, attempts=requests)


@dataclass(frozen=True, slots=True)
class Decision:
    """An agent's answer. No actions means hold; ``error`` set means the agent failed and holds.

    ``probabilities`` maps market id -> outcome -> stated probability (for a binary market,
    ``{"YES": p}`` is enough). Raw prompt and response are kept for audit.
    """

    actions: tuple[Action, ...] = ()
    probabilities: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    error_kind: str | None = None
    raw_prompt: str | None = None
    raw_response: str | None = None
    prompt_hash: str | None = None
    prompt_version: str | None = None
    tool_calls: tuple[ToolCallRecord, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.error is not None


@runtime_checkable
class Bettor(Protocol):
    """Anything that can decide. ``uses_peers`` bettors run after the others in a round."""

    name: str
    uses_peers: bool

    async def decide(self, view: AgentView) -> Decision: ...
