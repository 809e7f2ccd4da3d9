"""market.sync_stamp: a digest of the venue answers a market's last sync was built from

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 02:30:00

A re-sync compared every market field by field and every price with the latest stored
snapshot, so a sync where nothing changed cost as much as the first. With the digest stored, a
market whose answers are byte-for-byte those of the last sync (and whose prices need no
heartbeat yet) is skipped before anything is read back or written. Existing rows start without
one: their next sync takes the full path once and stores it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.add_column(sa.Column("sync_stamp", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.drop_column("sync_stamp")
