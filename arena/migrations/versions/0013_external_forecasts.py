"""external_forecasts: probabilities stated outside the arena's rounds, by imported forecasters

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29 06:00:00

External forecasters (a human panel, an offline model run: ``agents.external``) are seated in a
cohort and their forecasts stored with their own times, scored like the statements of
decisions. A new table only: existing databases need no data change.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "external_forecast",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.String(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("p", sa.Float(), nullable=False),
        sa.Column("stated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["agent_id", "cohort_id"],
            ["agent.id", "agent.cohort_id"],
            name=op.f("fk_external_forecast_agent_id_cohort_id_agent"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["market.id"],
            name=op.f("fk_external_forecast_market_id_market"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_external_forecast")),
        sa.UniqueConstraint(
            "agent_id",
            "market_id",
            "outcome",
            "stated_at",
            name=op.f("uq_external_forecast_agent_id_market_id_outcome_stated_at"),
        ),
    )
    op.create_index(
        op.f("ix_external_forecast_cohort_id"), "external_forecast", ["cohort_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_external_forecast_cohort_id"), table_name="external_forecast")
    op.drop_table("external_forecast")
