"""position_fillfactor: PostgreSQL leaves room in each page of ``position`` for its re-marks

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28 08:50:00

A replay re-marks every open position at each write (``marks.write_marks``: hundreds of rows an
UPDATE, tens of thousands in a year), and each update writes a new version of its row. With full
pages (fillfactor 100) a fifth of those versions found no room on their row's page: they moved,
got new entries in the table's three indexes, and left the table four times its live size in
dead rows, which every later mark scanned again. With a page 70% full the new version stays on
its page (a heap-only update, 98% of them in the 20-agent benchmark replay), no index changes,
and the marks' UPDATEs cost the server a quarter less. Only pages written from now on keep the
room (existing rows move as they are updated). SQLite has no fillfactor (no-op).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FILLFACTOR = 70


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE position SET (fillfactor = {FILLFACTOR})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE position RESET (fillfactor)")
