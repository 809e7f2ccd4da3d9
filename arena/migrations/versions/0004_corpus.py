"""corpus: dated documents for the research tools, with a full-text index

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 02:30:00

``search_news`` ranks documents by text relevance among those published before the round. The
index is the engine's own: SQLite FTS5 (BM25) over an external-content table (triggers take out
deleted and updated rows; the importer indexes new ones in batches), PostgreSQL a generated ``tsvector`` column with a GIN index. The statements repeat
``arena.db.models.FULL_TEXT_DDL`` as it was when this revision was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FTS = "corpus_document_fts"
FULL_TEXT_DDL = {
    "sqlite": (
        f"CREATE VIRTUAL TABLE {FTS} USING fts5(title, text, content='corpus_document', "
        "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
        f"CREATE TRIGGER {FTS}_delete AFTER DELETE ON corpus_document BEGIN "
        f"INSERT INTO {FTS}({FTS}, rowid, title, text) "
        "VALUES ('delete', old.id, old.title, old.text); END",
        f"CREATE TRIGGER {FTS}_update AFTER UPDATE ON corpus_document BEGIN "
        f"INSERT INTO {FTS}({FTS}, rowid, title, text) "
        "VALUES ('delete', old.id, old.title, old.text); "
        f"INSERT INTO {FTS}(rowid, title, text) VALUES (new.id, new.title, new.text); END",
    ),
    "postgresql": (
        "ALTER TABLE corpus_document ADD COLUMN search tsvector GENERATED ALWAYS AS "
        "(setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', text), 'B')) "
        "STORED",
        "CREATE INDEX ix_corpus_document_search ON corpus_document USING gin (search)",
        # Track 10,000 most common lexemes (not 1,000): the search planner reads their frequencies.
        "ALTER TABLE corpus_document ALTER COLUMN search SET STATISTICS 1000",
    ),
}


def _json() -> sa.types.TypeEngine[Any]:
    """arena.db.types.JSONDoc: JSON text on SQLite, JSONB on PostgreSQL."""
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "corpus",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("source_file", sa.String(), nullable=False),
        sa.Column("document_count", sa.Integer(), nullable=False),
        sa.Column("dropped_json", _json(), nullable=False),
        sa.Column("deny_list_json", _json(), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_corpus")),
        sa.UniqueConstraint("name", name=op.f("uq_corpus_name")),
    )
    op.create_table(
        "corpus_document",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("url", sa.String(), nullable=True),
        sa.Column("source", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["corpus_id"],
            ["corpus.id"],
            name=op.f("fk_corpus_document_corpus_id_corpus"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_corpus_document")),
        sa.UniqueConstraint("corpus_id", "doc_id", name=op.f("uq_corpus_document_corpus_id_doc_id")),
    )
    op.create_index(
        op.f("ix_corpus_document_corpus_id_published_at"),
        "corpus_document",
        ["corpus_id", "published_at"],
        unique=False,
    )
    for statement in FULL_TEXT_DDL[op.get_bind().dialect.name]:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"DROP TABLE {FTS}")  # its triggers go with corpus_document
    op.drop_index(op.f("ix_corpus_document_corpus_id_published_at"), table_name="corpus_document")
    op.drop_table("corpus_document")
    op.drop_table("corpus")
