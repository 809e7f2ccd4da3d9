"""work_unit: marks, settlement and sync units, and at most one unfinished unit per kind and key

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 04:20:00

Queueing was check-then-insert: two `arena replay --queue` of one cohort at the same moment could
both find no unit and make two. A partial unique index on (kind, dedup_key) over unfinished units
lets the database decide (``INSERT … ON CONFLICT DO NOTHING``). The key names what a unit works on
(a cohort; the venue for a sync, which is why ``cohort_id`` becomes optional). Existing replay
units take their cohort id as key; if the race already made duplicates, the newer unfinished ones
are failed, naming the unit they duplicate, so the index can be built.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNFINISHED = "state IN ('queued', 'running')"
# The oldest unfinished unit of each (kind, key) stays; later unfinished ones are failed, naming it.
FAIL_DUPLICATES = """
UPDATE work_unit SET state = 'failed', lease_token = NULL, lease_expires_at = NULL,
    error = 'duplicate of unit ' || (
        SELECT MIN(w.id) FROM work_unit w WHERE w.kind = work_unit.kind
        AND w.dedup_key = work_unit.dedup_key AND w.state IN ('queued', 'running')
    ) || ' (migration 0007)'
WHERE state IN ('queued', 'running') AND id > (
    SELECT MIN(w.id) FROM work_unit w WHERE w.kind = work_unit.kind
    AND w.dedup_key = work_unit.dedup_key AND w.state IN ('queued', 'running')
)
"""


def upgrade() -> None:
    with op.batch_alter_table("work_unit") as batch:
        batch.add_column(sa.Column("dedup_key", sa.String(), nullable=True))
    op.execute("UPDATE work_unit SET dedup_key = cohort_id")
    op.execute(FAIL_DUPLICATES)
    if op.get_bind().dialect.name == "postgresql":
        # The updates queued deferred foreign-key checks; PostgreSQL alters no table with those
        # pending, so run them now (they pass: no key column changed).
        op.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with op.batch_alter_table("work_unit") as batch:
        batch.alter_column("dedup_key", existing_type=sa.String(), nullable=False)
        batch.alter_column("cohort_id", existing_type=sa.String(), nullable=True)
        batch.drop_constraint(op.f("ck_work_unit_kind"), type_="check")
        batch.create_check_constraint(
            op.f("ck_work_unit_kind"), "kind IN ('replay', 'marks', 'settle', 'sync')"
        )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("SET CONSTRAINTS ALL DEFERRED")  # back as every arena foreign key is declared
    op.create_index(
        "uq_work_unit_unfinished_kind_key",
        "work_unit",
        ["kind", "dedup_key"],
        unique=True,
        sqlite_where=sa.text(UNFINISHED),
        postgresql_where=sa.text(UNFINISHED),
    )


def downgrade() -> None:
    """Units of the new kinds (and sync units, which have no cohort) cannot exist before 0007."""
    op.drop_index("uq_work_unit_unfinished_kind_key", table_name="work_unit")
    op.execute("DELETE FROM work_unit WHERE kind <> 'replay'")
    with op.batch_alter_table("work_unit") as batch:
        batch.drop_constraint(op.f("ck_work_unit_kind"), type_="check")
        batch.create_check_constraint(op.f("ck_work_unit_kind"), "kind IN ('replay')")
        batch.alter_column("cohort_id", existing_type=sa.String(), nullable=False)
        batch.drop_column("dedup_key")
