"""Leakage proofs for ``search_news``, on both backends: nothing published at or after ``before``
ever comes back, however relevant, and everything relevant published before it can."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from arena.corpus import query_plan
from arena.corpus.search import MAX_K, NewsHit, search_news
from arena.corpus.store import import_corpus
from tests.corpus.docs import T0, doc, write_jsonl

WORDS = ("rates", "election", "storm", "oil", "court", "merger")
# Publish times on a grid of quarter days, so ``before`` often falls exactly on a publish time.
documents = st.lists(
    st.tuples(st.integers(0, 40), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)),
    min_size=1,
    max_size=25,
)
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(
    corpus=documents, cut=st.integers(0, 41), query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)
)
def test_search_returns_exactly_the_matching_documents_published_before(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: list[tuple[int, list[str]]],
    cut: int,
    query: list[str],
) -> None:
    hits, before = _imported_and_searched(engine, tmp_path_factory, corpus, cut, query)
    assert all(hit.published_at < before for hit in hits)
    expected = {
        f"d{i}" for i, (quarter, words) in enumerate(corpus) if quarter < cut and set(words) & set(query)
    }
    assert {hit.id for hit in hits} == expected  # complete too: the bound hides nothing it should show


@FUZZ
@given(lag_seconds=st.integers(-3600, 3600), k=st.integers(1, 5))
def test_a_planted_future_document_is_never_returned(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory, lag_seconds: int, k: int
) -> None:
    """The best possible match, published at ``before`` or later, loses to any older weak match."""
    before = T0 + timedelta(days=10)
    planted = before + timedelta(seconds=abs(lag_seconds))  # at the bound itself or after it
    rows = [
        doc("old", 1, "weather report", "a storm may come"),
        {
            **doc("future", 0, "storm storm storm", "storm storm storm storm"),
            "published_at": planted.isoformat(),
        },
    ]
    path = write_jsonl(tmp_path_factory.mktemp("plant") / "c.jsonl", rows)
    import_corpus(engine, path, "plant", replace=True)
    with engine.connect() as connection:
        hits = search_news(connection, "plant", "storm", k=k, before=before)
        after = search_news(connection, "plant", "storm", k=k, before=planted + timedelta(microseconds=1))
    assert [hit.id for hit in hits] == ["old"]
    assert after[0].id == "future"  # not vacuous: once published it is the best match


@FUZZ
@given(
    corpus=documents, cut=st.integers(0, 41), query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)
)
def test_with_every_word_common_only_documents_before_holding_them_all_come_back(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    corpus: list[tuple[int, list[str]]],
    cut: int,
    query: list[str],
) -> None:
    """Every word past the candidate budget (here 0): the documents holding all the words, newest
    first from the cutoff back (SQLite: the rowid bound, arena.corpus.rowids; PostgreSQL: the
    publish-time index), not scored."""
    monkeypatch.setattr(query_plan, "CANDIDATE_BUDGET", 0)
    hits, before = _imported_and_searched(engine, tmp_path_factory, corpus, cut, query)
    assert all(hit.published_at < before for hit in hits)
    holding_all = {
        f"d{i}" for i, (quarter, words) in enumerate(corpus) if quarter < cut and set(query) <= set(words)
    }
    if holding_all:
        assert {hit.id for hit in hits} == holding_all
    # Newest first, on both backends; one publish time: the later imported (in the file) first.
    order = [(hit.published_at, int(hit.id[1:])) for hit in hits]
    assert order == sorted(order, reverse=True)
    assert {hit.score for hit in hits} <= {0.0}


def _imported_and_searched(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: list[tuple[int, list[str]]],
    cut: int,
    query: list[str],
) -> tuple[list[NewsHit], datetime]:
    """``corpus`` (a publish quarter-day and the title words of each document) imported afresh,
    then searched for ``query`` before quarter-day ``cut``: the hits and that cutoff."""
    rows = [
        doc(f"d{i}", quarter / 4, " ".join(words), f"body {i}") for i, (quarter, words) in enumerate(corpus)
    ]
    path = write_jsonl(tmp_path_factory.mktemp("pit") / "c.jsonl", rows)
    import_corpus(engine, path, "pit", replace=True)
    before = T0 + timedelta(days=cut / 4)
    with engine.connect() as connection:
        return search_news(connection, "pit", " ".join(query), k=MAX_K, before=before), before
