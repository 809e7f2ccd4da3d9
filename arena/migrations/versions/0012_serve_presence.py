"""serve_presence: every `arena serve` process with its heartbeat and the cadences it runs with;
each worker's lease

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30 10:00:00

`arena status` shows the leader and its standbys from ``serve_process`` (a standby is otherwise
invisible: only the leader holds the lease row), and each job's cadence as the leading process
recorded it, not as the environment of whoever runs `arena status` would have it.
``worker.lease_seconds`` is the lease a worker runs with: one silent for longer is gone.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "serve_process",
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        _at("started_at"),
        _at("heartbeat_at"),
        _at("stopped_at", nullable=True),
        sa.Column("lease_seconds", sa.Float(), nullable=False),
        sa.Column(
            "settings_json", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False
        ),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("owner", name=op.f("pk_serve_process")),
    )
    with op.batch_alter_table("worker") as batch:
        batch.add_column(sa.Column("lease_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("worker") as batch:
        batch.drop_column("lease_seconds")
    op.drop_table("serve_process")
