"""tool_calls: research-tool calls and per-request provider usage of each decision

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 02:30:00

A tool-using LLM decision makes several provider requests and tool calls; the decision row keeps
their sums, these tables each one (arguments and results over 16,000 characters by sha256 and
size only). New tables only: existing databases need no data change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _exact(scale: int) -> sa.types.TypeEngine[Any]:
    """arena.db.types.ExactDecimal: NUMERIC(18, scale) on PostgreSQL, scaled 64-bit integers on SQLite."""
    return sa.BigInteger().with_variant(sa.Numeric(18, scale), "postgresql")


def _decision_key(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["decision_id", "agent_id"],
        ["decision.id", "decision.agent_id"],
        name=op.f(f"fk_{table}_decision_id_agent_id_decision"),
        initially="DEFERRED",
        deferrable=True,
    )


def upgrade() -> None:
    op.create_table(
        "tool_call",
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("call_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("arguments", sa.Text(), nullable=True),
        sa.Column("arguments_sha256", sa.String(), nullable=False),
        sa.Column("arguments_chars", sa.Integer(), nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("result_sha256", sa.String(), nullable=False),
        sa.Column("result_chars", sa.Integer(), nullable=False),
        sa.Column("is_error", sa.Boolean(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        _decision_key("tool_call"),
        sa.PrimaryKeyConstraint("decision_id", "seq", name=op.f("pk_tool_call")),
    )
    op.create_table(
        "llm_request",
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", _exact(10), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        _decision_key("llm_request"),
        sa.PrimaryKeyConstraint("decision_id", "seq", name=op.f("pk_llm_request")),
    )


def downgrade() -> None:
    op.drop_table("llm_request")
    op.drop_table("tool_call")
