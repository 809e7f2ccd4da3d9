"""Turning an agent's ``Decision`` into ledger fills and a ``decision`` row.

Invalid output is never coerced: an agent error, a rule-breaking action or an unusable stated
probability is recorded with its reason beside the raw response, and the agent holds. So is
usage that cannot be real (``Usage.problem``: a cost of 1e308, NaN tokens), whatever bettor
reported it: the decision is an ``invalid_usage`` error, its cost counted at the ceiling per
request (``Usage.counted``) so budget caps still hold, and the run goes on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import ROUND_UP, Decimal
from typing import Any

from agents.types import Decision
from arena.core.decisions import INVALID_ACTIONS
from arena.db.types import storable_text
from arena.engine.store.claims import DONE, ERROR, REJECTED
from portfolio import Bet, DecisionRejected, Fill, Ledger, MarketId, Quotes, Sell
from portfolio.actions import Action

_COST_QUANTUM = Decimal("1e-10")  # the decision.cost_usd column's precision
INVALID_USAGE = "invalid_usage"


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str
    fills: tuple[Fill, ...] = ()
    error: str | None = None
    error_kind: str | None = None


def with_plausible_usage(decision: Decision) -> Decision:
    """``decision`` itself, or, when its usage cannot be real, an ``invalid_usage`` error (the
    agent holds) keeping its texts, with the usage that is recorded instead."""
    problem = decision.usage.problem()
    if problem is None:
        return decision
    return replace(
        decision,
        actions=(),
        probabilities={},
        usage=decision.usage.counted(),
        error=f"{problem}; counted as the most its requests may cost",
        error_kind=INVALID_USAGE,
    )


def execute(
    ledger: Ledger,
    decision: Decision,
    quotes: Quotes,
    at: datetime,
    *,
    decision_id: str,
    closed_markets: Mapping[MarketId, datetime] | None = None,
) -> Outcome:
    """Apply the decision to ``ledger`` (all legs or none) and say what happened; a leg on one of
    ``closed_markets`` (closed for trading, with its close time) is refused with that time."""
    if decision.is_error:
        return Outcome(ERROR, (), decision.error, decision.error_kind or "agent_error")
    problem = probability_problem(decision.probabilities)
    if problem:
        return Outcome(REJECTED, (), problem, "invalid_probabilities")
    try:
        fills = ledger.apply_decision(
            decision.actions, quotes, at, decision_id=decision_id, closed_markets=closed_markets
        )
    except DecisionRejected as exc:
        return Outcome(REJECTED, (), str(exc), INVALID_ACTIONS)
    return Outcome(DONE, tuple(fills))


def markets_traded(actions: Iterable[object], ledger: Ledger) -> set[MarketId]:
    """The markets ``actions`` would trade: those bet on and those of the positions sold (ids as
    the agent wrote them; an id no database could store, or a position the ledger does not know,
    names no market)."""
    named: set[MarketId] = set()
    for action in actions:
        if isinstance(action, Bet) and isinstance(action.market_id, str):
            if storable_text(action.market_id) == action.market_id:
                named.add(MarketId(action.market_id))
        elif isinstance(action, Sell) and isinstance(action.position_id, str):
            held = ledger.positions.get(action.position_id)
            if held is not None:
                named.add(held.market_id)
    return named


def probability_problem(probabilities: Mapping[str, Mapping[str, float]]) -> str | None:
    """Stated probabilities must be finite numbers in [0, 1] (they are stored and scored as given)."""
    for market_id, by_outcome in probabilities.items():
        for outcome, p in by_outcome.items():
            if not _is_probability(p):
                return f"stated probability for {outcome!r} of {market_id!r} must lie in [0, 1], got {p!r}"
    return None


def _is_probability(p: object) -> bool:
    if isinstance(p, bool) or not isinstance(p, int | float | Decimal):
        return False
    return math.isfinite(p) and 0 <= p <= 1


def action_json(action: Action) -> dict[str, str]:
    """An action as stored; its ids are the agent's text (a rejected action is kept as it came)."""
    if isinstance(action, Bet):
        return {
            "type": "bet",
            "market_id": _text(action.market_id),
            "outcome": _text(action.outcome),
            "amount": str(action.amount),
        }
    assert isinstance(action, Sell)
    return {"type": "sell", "position_id": _text(action.position_id), "percent": str(action.percent)}


def _text(value: object) -> str:
    """Agent-written text as stored; a plug-in's non-str id (an int) is stored as its str."""
    return storable_text(value if isinstance(value, str) else str(value))


def _optional_text(value: object | None) -> str | None:
    return None if value is None else _text(value)


def decision_values(
    decision: Decision, outcome: Outcome, *, cash_at_start: Decimal, max_bet: Decimal, at: datetime
) -> dict[str, Any]:
    """Column values of the finished decision row.

    Agent-written text (raw prompt and response included) is kept as given except for what
    ``storable_text`` must change: NUL and lone surrogates, which neither backend can store, are
    spelled as escapes.
    """
    usage = decision.usage
    return {
        "status": outcome.status,
        "decided_at": at,
        "raw_prompt": _optional_text(decision.raw_prompt),
        "raw_response": _optional_text(decision.raw_response),
        "actions_json": [action_json(a) for a in decision.actions],
        "probabilities_json": {
            _text(m): {_text(o): float(p) for o, p in ps.items()} for m, ps in decision.probabilities.items()
        }
        if outcome.error_kind != "invalid_probabilities"
        else {},
        "reasoning": _text(decision.reasoning or ""),  # the column holds "" for no reasoning
        "error": _optional_text(outcome.error),
        "error_kind": _optional_text(outcome.error_kind),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": usage.cost_usd.quantize(_COST_QUANTUM, rounding=ROUND_UP),
        "latency_s": usage.latency_s,
        "attempts": usage.attempts,
        "prompt_hash": _optional_text(decision.prompt_hash),
        "prompt_version": _optional_text(decision.prompt_version),
        "cash_at_start": cash_at_start,
        "max_bet": max_bet,
    }
