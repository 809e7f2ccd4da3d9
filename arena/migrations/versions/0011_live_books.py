"""live_books: paid provider requests kept as they answer, why a round asked nobody, the
venue's state of each market, and its own answer to a market resolved by hand

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 09:00:00

``llm_charge`` records each provider request of a decision as soon as it answered, under the
decision's claim; the decision's commit deletes the charges it accounts for, so an attempt whose
worker died is still paid for in the spending caps. ``round.note`` says why a round ended
without asking anyone (nothing to trade). ``resolution.venue_answer_json`` keeps the venue's
final answer to a market an operator resolved, so a disagreement can be reported.
``market.venue_status`` is the venue's own state of a market at its last sync (trading, why its
outcome is not final, resolved), which ``arena markets pending`` shows. New table and nullable
columns only: existing rows need no change (a market's next sync writes its status).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _exact(scale: int) -> sa.types.TypeEngine[Any]:
    """arena.db.types.ExactDecimal: NUMERIC(18, scale) on PostgreSQL, scaled 64-bit integers on SQLite."""
    return sa.BigInteger().with_variant(sa.Numeric(18, scale), "postgresql")


def _json() -> sa.types.TypeEngine[Any]:
    """arena.db.types.JSONDoc: JSON text on SQLite, JSONB on PostgreSQL."""
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "llm_charge",
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("claim_token", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", _exact(10), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("charged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), server_default=sa.text("CURRENT_TIMESTAMP"), nullable=False),
        sa.ForeignKeyConstraint(
            ["decision_id", "agent_id"],
            ["decision.id", "decision.agent_id"],
            name=op.f("fk_llm_charge_decision_id_agent_id_decision"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("decision_id", "claim_token", "seq", name=op.f("pk_llm_charge")),
    )
    with op.batch_alter_table("round") as batch:
        batch.add_column(sa.Column("note", sa.Text(), nullable=True))
    with op.batch_alter_table("resolution") as batch:
        batch.add_column(sa.Column("venue_answer_json", _json(), nullable=True))
    with op.batch_alter_table("market") as batch:
        batch.add_column(sa.Column("venue_status", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.drop_column("venue_status")
    with op.batch_alter_table("resolution") as batch:
        batch.drop_column("venue_answer_json")
    with op.batch_alter_table("round") as batch:
        batch.drop_column("note")
    op.drop_table("llm_charge")
