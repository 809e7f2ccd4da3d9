"""Storing decisions' traces: each tool call and each provider request, beside the decision row.

Written in the decisions' own commit transaction (``arena.engine.rounds.run``), so a decision is
never stored without its trace nor its trace without it. Text written by the model is stored as
``storable_text`` makes it (NUL and lone surrogates spelled as escapes), like the decision's.

The rows of a whole round phase go in one executemany per table, as plain values: building an
ORM object per row cost about 1 ms of CPU each (sqlmodel validates and instruments every
attribute), i.e. a third of a second for 100 agents making 3 calls, all of it after the last
agent answered and before the round could end. Nothing reads those writes' results: on
PostgreSQL they go in the unit's pipeline (``upsert.write_rows``), so the phase does not wait
for them apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_UP, Decimal
from typing import Any

from sqlalchemy import Table
from sqlmodel import Session

from agents.types import Decision
from arena.db.models import LLMRequestRow, ToolCallRow, metadata
from arena.db.types import storable_text
from arena.db.upsert import write_rows

_COST_QUANTUM = Decimal("1e-10")  # the cost_usd columns' precision
_TOOL_CALL: Table = metadata.tables[ToolCallRow.__tablename__]
_REQUEST: Table = metadata.tables[LLMRequestRow.__tablename__]


def store_traces(session: Session, decisions: Iterable[tuple[int, int, Decision]]) -> None:
    """Insert the tool-call and request rows of each ``(decision_id, agent_id, decision)``."""
    calls: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    for decision_id, agent_id, decision in decisions:
        calls += (
            {
                "decision_id": decision_id,
                "seq": seq,
                "agent_id": agent_id,
                "step": call.step,
                "call_id": storable_text(call.call_id),
                "name": storable_text(call.name),
                "arguments": _optional(call.arguments.text),
                "arguments_sha256": call.arguments.sha256,
                "arguments_chars": call.arguments.chars,
                "result": _optional(call.result.text),
                "result_sha256": call.result.sha256,
                "result_chars": call.result.chars,
                "is_error": call.is_error,
                "latency_s": call.latency_s,
            }
            for seq, call in enumerate(decision.tool_calls, start=1)
        )
        requests += (
            {
                "decision_id": decision_id,
                "seq": seq,
                "agent_id": agent_id,
                "prompt_tokens": request.prompt_tokens,
                "completion_tokens": request.completion_tokens,
                "cost_usd": request.cost_usd.quantize(_COST_QUANTUM, rounding=ROUND_UP),
                "latency_s": request.latency_s,
                "outcome": storable_text(request.outcome),
            }
            for seq, request in enumerate(decision.usage.requests, start=1)
        )
    for table, rows in ((_TOOL_CALL, calls), (_REQUEST, requests)):
        write_rows(session, table.insert, rows, table, shape=("insert",))


def _optional(text: str | None) -> str | None:
    return None if text is None else storable_text(text)
