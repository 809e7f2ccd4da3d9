"""work_queue: units of work for `arena worker` processes, and the workers themselves

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 02:40:00

Studies replay many cohorts; `arena worker` processes on any number of machines take them from
this queue (PostgreSQL, ``FOR UPDATE SKIP LOCKED``), fenced by a lease token per unit.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _recorded_at() -> sa.Column[object]:
    return sa.Column(
        "recorded_at", sa.DateTime(timezone=True), server_default=sa.text("CURRENT_TIMESTAMP"), nullable=False
    )


def upgrade() -> None:
    op.create_table(
        "worker",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        _at("started_at"),
        _at("heartbeat_at"),
        _at("stopped_at", nullable=True),
        sa.Column("unit_id", sa.Integer(), nullable=True),
        sa.Column("units_done", sa.Integer(), nullable=False),
        _recorded_at(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_worker")),
    )
    op.create_table(
        "work_unit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("cohort_id", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(), nullable=True),
        sa.Column("lease_token", sa.String(), nullable=True),
        _at("lease_expires_at", nullable=True),
        _at("available_at"),
        _at("enqueued_at"),
        _at("started_at", nullable=True),
        _at("finished_at", nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        _recorded_at(),
        sa.CheckConstraint("kind IN ('replay')", name=op.f("ck_work_unit_kind")),
        sa.CheckConstraint(
            "state IN ('queued', 'running', 'done', 'failed')", name=op.f("ck_work_unit_state")
        ),
        sa.ForeignKeyConstraint(
            ["cohort_id"],
            ["cohort.id"],
            name=op.f("fk_work_unit_cohort_id_cohort"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_unit")),
    )
    op.create_index(op.f("ix_work_unit_cohort_id"), "work_unit", ["cohort_id"], unique=False)
    op.create_index(
        op.f("ix_work_unit_state_available_at"), "work_unit", ["state", "available_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_work_unit_state_available_at"), table_name="work_unit")
    op.drop_index(op.f("ix_work_unit_cohort_id"), table_name="work_unit")
    op.drop_table("work_unit")
    op.drop_table("worker")
