"""A decision's traces (tool calls and provider requests) are stored exactly as given, text
written by a model included, and on PostgreSQL go in the unit's pipeline: the unit does not wait
for them apart."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from agents.tools import StoredText, ToolCallRecord
from agents.types import Decision, RequestUsage, Usage
from arena.db.engine import session_scope
from arena.db.models import DecisionRow, LLMRequestRow, ToolCallRow
from arena.tools.store import store_traces
from tests.db.rows import added_decision, build_world
from tests.db.waits import waits

# What a model may write: JSON with quotes and backslashes, the array syntax PostgreSQL's text
# form uses, the word NULL, newlines, a long line.
HOSTILE = ['{"q": "a \\"quoted\\" \\\\ path", "n": [1, 2]}', "NULL", "{,}", 'say "hi",\nthen\\go', "x" * 5000]


def _decision(calls: list[str]) -> Decision:
    records = tuple(
        ToolCallRecord(
            step=i,
            call_id=f"call_{i}",
            name="search_news",
            arguments=StoredText.of(text),
            result=StoredText.of(text[::-1]),
            is_error=i % 2 == 0,
            latency_s=0.25,
        )
        for i, text in enumerate(calls, start=1)
    )
    requests = (
        RequestUsage(10, 5, Decimal("0.00012345678912"), 0.5, "tool_calls"),
        RequestUsage(11, 6, Decimal("0.001"), 0.75, "answer"),
    )
    return Decision(tool_calls=records, usage=Usage(requests=requests))


def test_traces_are_stored_exactly_as_given(engine: Engine, tmp_path: Path) -> None:
    world = build_world(engine)
    with session_scope(engine) as session:
        decision_id = added_decision(session, world)
    traced = _decision(HOSTILE)
    with waits(tmp_path / "trace") as (watch, found), session_scope(engine) as session:
        if engine.dialect.name == "postgresql":
            watch(session)
        store_traces(session, [(decision_id, world.agent_ids[0], traced)])
    if engine.dialect.name == "postgresql":
        assert found == ["Sync", "Sync"]  # psycopg's BEGIN; both inserts with the COMMIT
    with Session(engine) as session:
        calls = session.exec(select(ToolCallRow).order_by(col(ToolCallRow.seq))).all()
        requests = session.exec(select(LLMRequestRow).order_by(col(LLMRequestRow.seq))).all()
        assert session.exec(select(DecisionRow.id)).all() == [decision_id]
    assert [(c.arguments, c.result, c.is_error) for c in calls] == [
        (text, text[::-1], i % 2 == 0) for i, text in enumerate(HOSTILE, start=1)
    ]
    assert [(r.prompt_tokens, r.cost_usd, r.outcome) for r in requests] == [
        (10, Decimal("0.0001234568"), "tool_calls"),  # rounded up to the column's 1e-10
        (11, Decimal("0.001"), "answer"),
    ]
