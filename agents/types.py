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
