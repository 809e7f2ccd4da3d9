"""corpus_rowids: on SQLite a document's id (its full-text rowid) is in publish order

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 06:40:00

``search_news`` on SQLite bounds its full-text walks by rowid ("published before the cutoff")
and walks back from that bound for the newest documents, so an id must say when its document
was published: the publish second (from 0001-01-01 UTC; 39 bits hold every instant a datetime
can) shifted left by 24 bits, plus a tie-break numbering the documents of that second in id
order (``arena.corpus.rowids``, repeated here as it was when this revision was written).
Documents imported before it get such ids; the update trigger moves each one's full-text entry
with it. PostgreSQL keeps its ids (no-op).
Downgrade keeps the ids: the older importer numbers new documents after the largest id, which
these are not in the way of.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIE_BITS = 24
_ORIGIN = datetime(1, 1, 1, tzinfo=UTC)


def upgrade() -> None:
    connection = op.get_bind()
    if connection.dialect.name != "sqlite":
        return
    rows = connection.exec_driver_sql("SELECT id, published_at FROM corpus_document ORDER BY id").all()
    ties: dict[int, int] = {}
    moves = []
    for old, published_at in rows:
        at = datetime.fromisoformat(published_at).replace(tzinfo=UTC)  # stored as naive UTC text
        second = (at - _ORIGIN) // timedelta(seconds=1)
        tie = ties.get(second, 0)
        ties[second] = tie + 1
        moves.append((second << TIE_BITS | tie, old))
    # Old ids are small sequence numbers, far below any new one: no update collides with a row.
    if moves:
        connection.exec_driver_sql("UPDATE corpus_document SET id = ? WHERE id = ?", moves)


def downgrade() -> None:
    """Nothing to undo (see the module doc)."""
