"""Importing corpora into a real database of each backend: all documents or none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from arena.corpus.deny_list import DenyList
from arena.corpus.documents import CorpusError
from arena.corpus.rowids import TIE_MASK, before_bound, document_rowid, publish_second
from arena.corpus.search import search_news
from arena.corpus.store import corpus_info, import_corpus, import_if_absent, list_corpora
from arena.db.models import CorpusDocumentRow, CorpusRow
from tests.corpus.docs import T0, doc, write_jsonl


def _counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as connection:
        corpora = connection.execute(select(func.count()).select_from(CorpusRow)).scalar_one()
        documents = connection.execute(select(func.count()).select_from(CorpusDocumentRow)).scalar_one()
    return corpora, documents


def test_import_keeps_documents_and_counts_restricted_ones(engine: Engine, tmp_path: Path) -> None:
    rows = [
        doc("a", 3, "Rates held", "The central bank held rates."),
        doc("b", 1, "Odds move", "x", url="https://polymarket.com/event/b"),
        doc("c", 9, "Forecast", "y", source="Metaculus"),
        doc("d", 5, "Poll", "z", url="https://www.metaculus.com/q/1", source="Metaculus"),
        doc("e", 0.5, "Election", "Candidates debate.", url="https://news.test/e", source="News"),
    ]
    progress: list[int] = []
    path = write_jsonl(tmp_path / "news.jsonl", rows)
    info = import_corpus(engine, path, "news", on_progress=progress.append, batch_size=1)
    assert info.documents == 2
    assert info.dropped == {
        "metaculus.com (by its source)": 1,
        "metaculus.com (by its url)": 1,
        "polymarket.com (by its url)": 1,
    }
    assert (info.first_published, info.last_published) == (T0 + timedelta(days=0.5), T0 + timedelta(days=3))
    assert info.source_file == "news.jsonl" and "kalshi.com" in info.deny_list
    assert progress[-1] == path.stat().st_size and progress == sorted(progress)
    assert _counts(engine) == (1, 2)


def test_a_bad_line_anywhere_writes_nothing(engine: Engine, tmp_path: Path) -> None:
    good = [doc(f"g{i}", i, "fine", "text") for i in range(30)]
    bad = {"id": "late", "published_at": "2025-02-01T00:00:00", "title": "t", "text": "x"}
    path = write_jsonl(tmp_path / "news.jsonl", [*good, bad])
    with pytest.raises(CorpusError, match=r"^news.jsonl line 31 \(id 'late'\): 'published_at'.*zone"):
        import_corpus(engine, path, "news", batch_size=7)  # four batches were already inserted
    assert _counts(engine) == (0, 0)


def test_an_existing_name_is_refused_unless_replaced(engine: Engine, tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "one.jsonl", [doc("a", 1, "one", "")])
    second = write_jsonl(tmp_path / "two.jsonl", [doc("b", 2, "two", ""), doc("c", 4, "three", "")])
    import_corpus(engine, first, "news")
    with pytest.raises(CorpusError, match="already exists; pass --replace"):
        import_corpus(engine, second, "news")
    info = import_corpus(engine, second, "news", replace=True)
    assert (info.documents, info.source_file) == (2, "two.jsonl")
    assert _counts(engine) == (1, 2)


def test_import_if_absent_imports_once_and_keeps_what_is_there(engine: Engine, tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "one.jsonl", [doc("a", 1, "one", "")])
    second = write_jsonl(tmp_path / "two.jsonl", [doc("b", 2, "two", ""), doc("c", 4, "three", "")])
    info, imported = import_if_absent(engine, first, "news")
    assert imported and (info.documents, info.source_file) == (1, "one.jsonl")
    info, imported = import_if_absent(engine, second, "news")
    assert not imported and (info.documents, info.source_file) == (1, "one.jsonl")
    assert _counts(engine) == (1, 1)
    bad = write_jsonl(tmp_path / "bad.jsonl", [doc("d", 1, "x", ""), "{oops"])
    with pytest.raises(CorpusError, match="line 2: not a JSON document"):  # a bad file still fails
        import_if_absent(engine, bad, "other")
    assert _counts(engine) == (1, 1)


def test_a_failed_replace_keeps_the_old_corpus(engine: Engine, tmp_path: Path) -> None:
    import_corpus(engine, write_jsonl(tmp_path / "one.jsonl", [doc("a", 1, "one", "")]), "news")
    broken = write_jsonl(tmp_path / "two.jsonl", [doc("b", 2, "two", ""), "{oops"])
    with pytest.raises(CorpusError, match="line 2: not a JSON document"):
        import_corpus(engine, broken, "news", replace=True)
    with engine.connect() as connection:
        kept = corpus_info(connection, "news")
    assert kept is not None and (kept.documents, kept.source_file) == (1, "one.jsonl")


def test_corpora_are_listed_by_name_each_with_its_own_range(engine: Engine, tmp_path: Path) -> None:
    import_corpus(engine, write_jsonl(tmp_path / "z.jsonl", [doc("a", 10, "z", "")]), "zeta")
    rows = [doc("a", 2, "a", ""), doc("b", 7, "b", "", source="kalshi.com")]
    import_corpus(engine, write_jsonl(tmp_path / "a.jsonl", rows), "alpha", deny=DenyList.of(["other.test"]))
    with engine.connect() as connection:
        corpora = list_corpora(connection)
        assert corpus_info(connection, "missing") is None
    assert [(c.name, c.documents, c.last_published) for c in corpora] == [
        ("alpha", 2, T0 + timedelta(days=7)),  # kalshi.com kept: this import's list does not deny it
        ("zeta", 1, T0 + timedelta(days=10)),
    ]
    assert corpora[0].deny_list == ("other.test",) and corpora[0].dropped == {}


@pytest.mark.parametrize("name", ["", "two words", "-lead", "x" * 65, "a/b"])
def test_a_corpus_name_must_be_a_short_identifier(engine: Engine, tmp_path: Path, name: str) -> None:
    path = write_jsonl(tmp_path / "n.jsonl", [doc("a", 1, "t", "")])
    with pytest.raises(CorpusError, match="corpus name"):
        import_corpus(engine, path, name)


def test_replacing_a_corpus_keeps_the_full_text_index_consistent(engine: Engine, tmp_path: Path) -> None:
    """SQLite: the FTS5 index is written by the importer and cleaned by triggers; FTS5's own
    integrity check compares it with the documents. Both backends: old words no longer match."""
    old = [doc(f"o{i}", i, f"zebra {i}", "old words") for i in range(12)]
    import_corpus(engine, write_jsonl(tmp_path / "one.jsonl", old), "news", batch_size=5)
    new = [doc(f"n{i}", i, f"giraffe {i}", "new words") for i in range(7)]
    import_corpus(engine, write_jsonl(tmp_path / "two.jsonl", new), "news", replace=True, batch_size=3)
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            connection.exec_driver_sql(
                "INSERT INTO corpus_document_fts(corpus_document_fts, rank) VALUES ('integrity-check', 1)"
            )
        later = T0 + timedelta(days=30)
        assert search_news(connection, "news", "zebra", k=20, before=later) == []
        assert len(search_news(connection, "news", "giraffe", k=20, before=later)) == 7


def test_a_file_without_documents_is_refused(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"^empty.jsonl: no documents"):
        import_corpus(engine, path, "news")
    assert _counts(engine) == (0, 0)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_ids_are_in_publish_order_whatever_the_file_order(engine: Engine, tmp_path: Path) -> None:
    """A document's id is its publish second and a tie-break (arena.corpus.rowids): documents of
    one second, across batches and corpora, take the next free tie-break in turn."""
    rows = [doc("late", 3, "c"), doc("same1", 1, "a"), doc("early", 0.5, "b"), doc("same2", 1, "d")]
    import_corpus(engine, write_jsonl(tmp_path / "one.jsonl", rows), "one", batch_size=2)
    import_corpus(engine, write_jsonl(tmp_path / "two.jsonl", [doc("other", 1, "e")]), "two")
    with engine.connect() as connection:
        ids = dict(connection.execute(select(CorpusDocumentRow.doc_id, CorpusDocumentRow.id)).all())
        indexed = connection.exec_driver_sql("SELECT rowid FROM corpus_document_fts_docsize").scalars().all()
    day = {n: T0 + timedelta(days=n) for n in (0.5, 1, 3)}
    assert ids == {
        "early": document_rowid(day[0.5], 0),
        "same1": document_rowid(day[1], 0),
        "same2": document_rowid(day[1], 1),  # a later batch: after the first batch's tie-break
        "other": document_rowid(day[1], 2),  # another corpus: never the same id
        "late": document_rowid(day[3], 0),
    }
    assert sorted(indexed) == sorted(ids.values())  # every document indexed under its id
    with pytest.raises(ValueError, match="does not fit a rowid"):
        document_rowid(day[1], TIE_MASK + 1)
    # The last instant a datetime holds still gets an id, and every id is a positive int64.
    assert 0 < document_rowid(datetime.max.replace(tzinfo=UTC), TIE_MASK) < 1 << 63


def test_before_bound_keeps_every_document_published_before_and_none_of_a_later_second() -> None:
    """Published before ``before``: id below the bound. From the next second on (from ``before``
    itself when it is a whole second): id at or above it. Within a fractional ``before``'s
    second the row's own ``published_at < before`` decides."""
    instants = [T0 + timedelta(seconds=s) for s in (-1, 0, 0.25, 0.999999, 1, 1.5, 2)]
    for before in instants:
        whole = before.microsecond == 0
        for at in instants:
            for tie in (0, 5):
                below = document_rowid(at, tie) < before_bound(before)
                if at < before:
                    assert below, (before, at)
                elif publish_second(at) > publish_second(before) or whole:
                    assert not below, (before, at)
