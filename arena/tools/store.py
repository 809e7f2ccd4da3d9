"""Storing a decision's trace: each tool call and each provider request, beside the decision row.

Written in the decision's own commit transaction (``arena.engine.rounds``), so a decision is
never stored without its trace nor its trace without it. Text written by the model is stored as
``storable_text`` makes it (NUL and lone surrogates spelled as escapes), like the decision's.
"""

from __future__ import annotations

from decimal import ROUND_UP, Decimal

from sqlmodel import Session

from agents.types import Decision
from arena.db.models import LLMRequestRow, ToolCallRow
from arena.db.types import storable_text

_COST_QUANTUM = Decimal("1e-10")  # the cost_usd columns' precision


def store_trace(session: Session, decision_id: int, agent_id: int, decision: Decision) -> None:
    """Add the decision's tool-call and request rows to ``session`` (flushed with the commit)."""
    for seq, call in enumerate(decision.tool_calls, start=1):
        session.add(
            ToolCallRow(
                decision_id=decision_id,
                seq=seq,
                agent_id=agent_id,
                step=call.step,
                call_id=storable_text(call.call_id),
                name=storable_text(call.name),
                arguments=_optional(call.arguments.text),
                arguments_sha256=call.arguments.sha256,
                arguments_chars=call.arguments.chars,
                result=_optional(call.result.text),
                result_sha256=call.result.sha256,
                result_chars=call.result.chars,
                is_error=call.is_error,
                latency_s=call.latency_s,
            )
        )
    for seq, request in enumerate(decision.usage.requests, start=1):
        session.add(
            LLMRequestRow(
                decision_id=decision_id,
                seq=seq,
                agent_id=agent_id,
                prompt_tokens=request.prompt_tokens,
                completion_tokens=request.completion_tokens,
                cost_usd=request.cost_usd.quantize(_COST_QUANTUM, rounding=ROUND_UP),
                latency_s=request.latency_s,
                outcome=storable_text(request.outcome),
            )
        )


def _optional(text: str | None) -> str | None:
    return None if text is None else storable_text(text)
