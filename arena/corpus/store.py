"""Import corpus files into the database and describe the corpora stored there.

An import is one transaction: documents are inserted in bulk batches as the file streams by (on
SQLite into a staging table, copied and indexed in id order at the end), and the first bad line
rolls everything back, so a corpus is either whole or absent. Documents from
restricted sources (``arena.corpus.deny_list``) are counted by the domain they matched, and whether
their url or their source named it, and left out.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, column, delete, func, insert, select, table, text, update
from sqlalchemy.engine import Connection
from sqlmodel import Session

from arena.corpus.deny_list import DenyList
from arena.corpus.documents import CorpusError, read_documents
from arena.corpus.rowids import TIE_BITS, TIE_MASK, document_rowid, publish_second
from arena.db.engine import writer
from arena.db.models import CorpusDocumentRow, CorpusRow, metadata

CORPUS = metadata.tables[CorpusRow.__tablename__]
DOCUMENT = metadata.tables[CorpusDocumentRow.__tablename__]
BATCH_SIZE = 5_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

Reader = Connection | Session
# SQLite: ids follow publish times, not the file's order (arena.corpus.rowids), and both the table
# and FTS5 take rows far faster in id order (a batch scattered over a million-row table and index
# costs 4x the import time). So batches go to a staging table, then into both in id order at once.
_STAGING = table(
    "corpus_import",
    *(column(c.name, c.type) for c in DOCUMENT.columns),
    schema="temp",
)
_STAGE = (
    "CREATE TEMP TABLE corpus_import AS SELECT * FROM corpus_document WHERE 0",
    "CREATE INDEX temp.ix_corpus_import_id ON corpus_import (id)",  # for _TAKEN and the copy's order
)
_UNSTAGE = (
    "INSERT INTO corpus_document SELECT * FROM temp.corpus_import ORDER BY id",  # same columns
    # From the documents just copied, read in id order (the staging table is in file order).
    "INSERT INTO corpus_document_fts(rowid, title, text) SELECT id, title, text FROM corpus_document "
    "WHERE id BETWEEN (SELECT min(id) FROM temp.corpus_import) AND (SELECT max(id) FROM temp.corpus_import) "
    "AND corpus_id = (SELECT corpus_id FROM temp.corpus_import LIMIT 1) ORDER BY id",
    "DROP TABLE temp.corpus_import",
)
# SQLite: the largest id taken in each of the given publish seconds, by other corpora or by this
# import's earlier batches (-1: none).
_TAKEN = text(
    "SELECT s.value, max("
    "coalesce((SELECT max(id) FROM corpus_document "
    "WHERE id >= s.value << :bits AND id < (s.value + 1) << :bits), -1), "
    "coalesce((SELECT max(id) FROM temp.corpus_import "
    "WHERE id >= s.value << :bits AND id < (s.value + 1) << :bits), -1)"
    ") FROM json_each(:seconds) AS s"
)


@dataclass(frozen=True, slots=True)
class CorpusInfo:
    """What ``arena corpus info`` shows: size, publish-date range, what the import left out."""

    name: str
    source_file: str
    documents: int
    first_published: datetime | None
    last_published: datetime | None
    dropped: dict[str, int]
    deny_list: tuple[str, ...]
    imported_at: datetime


def check_name(name: str) -> str:
    """A corpus name is a short identifier (cohort configs and tool results name it)."""
    if not _NAME.match(name):
        raise CorpusError(
            f"corpus name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def import_corpus(
    engine: Engine,
    path: Path,
    name: str,
    *,
    deny: DenyList | None = None,
    replace: bool = False,
    on_progress: Callable[[int], None] | None = None,
    batch_size: int = BATCH_SIZE,
) -> CorpusInfo:
    """Import the JSONL file ``path`` as corpus ``name``; ``on_progress`` gets the bytes read so far.

    Raises ``CorpusError`` (nothing written) for a bad line, a duplicate id, a file without
    documents, or an existing ``name`` without ``replace``; ``replace`` swaps the old corpus for
    the new one atomically.
    """
    deny = deny or DenyList()
    check_name(name)
    with path.open("rb") as stream, writer(engine).begin() as connection, _staged(connection):
        corpus_id = _new_corpus(connection, name, path.name, deny, replace=replace)
        dropped: Counter[str] = Counter()
        batch: list[dict[str, Any]] = []
        count = 0
        for _, document in read_documents(stream, path.name):
            denial = deny.denial(document.url, document.source)
            if denial is not None:
                dropped[str(denial)] += 1  # e.g. "metaculus.com (by its source)"
                continue
            batch.append(
                {
                    "corpus_id": corpus_id,
                    "doc_id": document.id,
                    "published_at": document.published_at,
                    "title": document.title,
                    "text": document.text,
                    "url": document.url,
                    "source": document.source,
                }
            )
            if len(batch) >= batch_size:
                count += _flush(connection, batch, on_progress, stream.tell())
        count += _flush(connection, batch, on_progress, stream.tell())
        if count == 0 and not dropped:
            raise CorpusError(f"{path.name}: no documents (expected one JSON document per line)")
        connection.execute(
            update(CORPUS)
            .where(CORPUS.c.id == corpus_id)
            .values(document_count=count, dropped_json=dict(sorted(dropped.items())))
        )
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql("ANALYZE corpus_document")  # word frequencies for search plans
    with engine.connect() as reader:
        return list_corpora(reader, name=name)[0]  # committed just above


def import_if_absent(engine: Engine, path: Path, name: str) -> tuple[CorpusInfo, bool]:
    """Corpus ``name`` as stored, importing ``path`` first when there is none of that name; the
    flag says whether this call imported it. For ``arena demo``: a second demo costs one lookup,
    and a corpus already imported under that name (perhaps rebuilt with ``--replace``) is kept."""
    with engine.connect() as reader:
        found = corpus_info(reader, name)
    if found is not None:
        return found, False
    try:
        return import_corpus(engine, path, name), True
    except CorpusError:
        with engine.connect() as reader:  # another process imported it meanwhile: that one stands
            found = corpus_info(reader, name)
        if found is None:
            raise
        return found, False


@contextmanager
def _staged(connection: Connection) -> Iterator[None]:
    """SQLite: the import's batches go to a staging table, and from there into the documents and
    the full-text index in id order when the block ends without an error (see ``_STAGE``)."""
    if connection.dialect.name != "sqlite":
        yield
        return
    for statement in _STAGE:
        connection.exec_driver_sql(statement)
    yield
    for statement in _UNSTAGE:
        connection.exec_driver_sql(statement)


def _flush(
    connection: Connection, batch: list[dict[str, Any]], on_progress: Callable[[int], None] | None, done: int
) -> int:
    """Insert ``batch`` in one executemany (SQLite: numbered, into the staging table), then empty
    it; returns its size."""
    size = len(batch)
    if batch:
        if connection.dialect.name == "sqlite":
            _number(connection, batch)
            connection.execute(insert(_STAGING), batch)
        else:
            connection.execute(insert(DOCUMENT), batch)
        batch.clear()
    if on_progress is not None:
        on_progress(done)
    return size


def _number(connection: Connection, batch: list[dict[str, Any]]) -> None:
    """Give each SQLite row its publish-ordered id: the next free tie-break in its publish second,
    after those taken by earlier batches and other corpora (one lookup per second, in one query)."""
    seconds = [publish_second(row["published_at"]) for row in batch]
    taken = connection.execute(_TAKEN, {"seconds": json.dumps(sorted(set(seconds))), "bits": TIE_BITS}).all()
    next_tie = {second: 0 if last < 0 else (last & TIE_MASK) + 1 for second, last in taken}
    for row, second in zip(batch, seconds, strict=True):
        try:
            row["id"] = document_rowid(row["published_at"], next_tie[second])
        except ValueError as exc:
            raise CorpusError(f"document {row['doc_id']!r}: {exc}") from None
        next_tie[second] += 1


def _new_corpus(connection: Connection, name: str, file_name: str, deny: DenyList, *, replace: bool) -> int:
    existing = connection.execute(select(CORPUS.c.id).where(CORPUS.c.name == name)).scalar_one_or_none()
    if existing is not None:
        if not replace:
            raise CorpusError(f"corpus {name!r} already exists; pass --replace to rebuild it from the file")
        connection.execute(delete(DOCUMENT).where(DOCUMENT.c.corpus_id == existing))
        connection.execute(delete(CORPUS).where(CORPUS.c.id == existing))
    row = {"name": name, "source_file": file_name, "document_count": 0, "dropped_json": {}}
    row["deny_list_json"] = list(deny.domains)
    return int(connection.execute(insert(CORPUS).values(row).returning(CORPUS.c.id)).scalar_one())


def corpus_info(reader: Reader, name: str) -> CorpusInfo | None:
    """The corpus called ``name``, or None if there is none."""
    found = list_corpora(reader, name=name)
    return found[0] if found else None


def list_corpora(reader: Reader, *, name: str | None = None) -> list[CorpusInfo]:
    """Every corpus (or the one called ``name``), by name."""
    # Correlated min/max: each is one probe of the (corpus_id, published_at) index per corpus.
    first, last = (
        select(agg(DOCUMENT.c.published_at)).where(DOCUMENT.c.corpus_id == CORPUS.c.id).scalar_subquery()
        for agg in (func.min, func.max)
    )
    query = select(CORPUS, first.label("first"), last.label("last")).order_by(CORPUS.c.name)
    if name is not None:
        query = query.where(CORPUS.c.name == name)
    return [
        CorpusInfo(
            name=row.name,
            source_file=row.source_file,
            documents=row.document_count,
            first_published=row.first,
            last_published=row.last,
            dropped=dict(row.dropped_json),
            deny_list=tuple(row.deny_list_json),
            imported_at=row.recorded_at,
        )
        for row in reader.execute(query)
    ]


def corpus_id(reader: Reader, name: str) -> int:
    """The id of corpus ``name``; ``CorpusError`` naming the corpora that exist otherwise."""
    found = reader.execute(select(CORPUS.c.id).where(CORPUS.c.name == name)).scalar_one_or_none()
    if found is None:
        names = reader.execute(select(CORPUS.c.name).order_by(CORPUS.c.name)).scalars().all()
        known = ", ".join(names) if names else "none; import one with `arena corpus import FILE --name NAME`"
        raise CorpusError(f"no corpus named {name!r} (corpora: {known})")
    return int(found)
