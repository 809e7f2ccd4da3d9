"""decision_units: a work unit may be one agent's decision in one round

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 04:20:00

`arena serve` with workers splits a due round into one unit per agent; a unit names its round
(``round_index``) and agent (``agent_id``), and one unit per (cohort, round, agent) exists at
most, so a standby planning the same round again reuses the units instead of doubling them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("work_unit") as batch:
        batch.add_column(sa.Column("round_index", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("agent_id", sa.Integer(), nullable=True))
        batch.drop_constraint(op.f("ck_work_unit_kind"), type_="check")
        batch.create_check_constraint(op.f("ck_work_unit_kind"), "kind IN ('replay', 'decision')")
        batch.create_unique_constraint(
            op.f("uq_work_unit_kind_cohort_id_round_index_agent_id"),
            ["kind", "cohort_id", "round_index", "agent_id"],
        )


def downgrade() -> None:
    op.execute("DELETE FROM work_unit WHERE kind = 'decision'")
    with op.batch_alter_table("work_unit") as batch:
        batch.drop_constraint(op.f("uq_work_unit_kind_cohort_id_round_index_agent_id"), type_="unique")
        batch.drop_constraint(op.f("ck_work_unit_kind"), type_="check")
        batch.create_check_constraint(op.f("ck_work_unit_kind"), "kind IN ('replay')")
        batch.drop_column("agent_id")
        batch.drop_column("round_index")
