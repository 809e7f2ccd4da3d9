"""decision_units: a work unit may be one agent's decision in one round

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 05:25:00

`arena serve` with workers splits a due round into one unit per agent; a unit names its round
(``round_index``) and agent (``agent_id``). Its ``dedup_key`` is ``cohort/round/agent``, so the
partial unique index of 0007 keeps one unfinished unit per decision as for every kind. A decision
is made once, not repeatedly as marks or a sync are, so a unique key over (kind, cohort, round,
agent), over finished units too, keeps at most one unit per decision ever: a standby planning the
same round again reuses the units (and queues a failed one again) instead of doubling them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("work_unit") as batch:
        batch.add_column(sa.Column("round_index", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("agent_id", sa.Integer(), nullable=True))
        batch.drop_constraint(op.f("ck_work_unit_kind"), type_="check")
        batch.create_check_constraint(
            op.f("ck_work_unit_kind"), "kind IN ('replay', 'marks', 'settle', 'sync', 'decision')"
        )
        batch.create_unique_constraint(
            op.f("uq_work_unit_kind_cohort_id_round_index_agent_id"),
            ["kind", "cohort_id", "round_index", "agent_id"],
        )


def downgrade() -> None:
    op.execute("DELETE FROM work_unit WHERE kind = 'decision'")
    with op.batch_alter_table("work_unit") as batch:
        batch.drop_constraint(op.f("uq_work_unit_kind_cohort_id_round_index_agent_id"), type_="unique")
        batch.drop_constraint(op.f("ck_work_unit_kind"), type_="check")
        batch.create_check_constraint(
            op.f("ck_work_unit_kind"), "kind IN ('replay', 'marks', 'settle', 'sync')"
        )
        batch.drop_column("agent_id")
        batch.drop_column("round_index")
