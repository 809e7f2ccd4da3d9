"""portfolio_close: each agent's last mark of every UTC day

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 15:50:00

Scoring reads portfolios at daily resolution. Choosing each day's last mark by a group-by over
every snapshot took seconds on a million marks; the mark writer now keeps this table current.
The upgrade fills it from the snapshots already stored, so existing databases score the same.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The UTC calendar day of a stored mark: SQLite keeps naive UTC text, PostgreSQL a timestamptz.
UTC_DAY = {
    "sqlite": "substr(marked_at, 1, 10)",
    "postgresql": "CAST(marked_at AT TIME ZONE 'UTC' AS DATE)",
}


def upgrade() -> None:
    op.create_table(
        "portfolio_close",
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("cohort_id", sa.String(), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id", "closed_at"],
            ["portfolio_snapshot.agent_id", "portfolio_snapshot.marked_at"],
            name=op.f("fk_portfolio_close_agent_id_closed_at_portfolio_snapshot"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["agent_id", "cohort_id"],
            ["agent.id", "agent.cohort_id"],
            name=op.f("fk_portfolio_close_agent_id_cohort_id_agent"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("agent_id", "day", name=op.f("pk_portfolio_close")),
    )
    op.create_index(
        op.f("ix_portfolio_close_cohort_id_day"), "portfolio_close", ["cohort_id", "day"], unique=False
    )
    day = UTC_DAY[op.get_bind().dialect.name]
    op.execute(
        "INSERT INTO portfolio_close (agent_id, day, cohort_id, closed_at) "
        f"SELECT agent_id, {day}, cohort_id, max(marked_at) FROM portfolio_snapshot "
        f"GROUP BY agent_id, cohort_id, {day}"
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_portfolio_close_cohort_id_day"), table_name="portfolio_close")
    op.drop_table("portfolio_close")
