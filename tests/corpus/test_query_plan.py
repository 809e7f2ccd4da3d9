"""Which words a search scores: all of them on a small corpus; on a large one the rarest, within
a budget of candidate documents (SQLite counts exactly, so the rule is checked there)."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from arena.corpus import query_plan
from arena.corpus.query_plan import plan_matches
from arena.corpus.search import search_news
from arena.corpus.store import import_corpus
from arena.db.engine import make_engine
from tests.corpus.docs import T0, doc, write_jsonl

ROWS = [
    *(doc(f"c{i}", i, "alpha beta", "common words") for i in range(6)),  # alpha, beta: 6 documents each
    doc("g", 7, "gamma", "alpha"),  # alpha: 7
    doc("d1", 8, "delta", "mid"),
    doc("d2", 9, "delta epsilon", "mid"),
    doc("z", 10, "zeta", "only here"),
    doc("o", 11, "omega", "omega"),
    *(doc(f"k{i}", 12 + i, "kappa", "never with the first letter") for i in range(4)),
]


@pytest.fixture
def corpus(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    import_corpus(engine, write_jsonl(tmp_path / "c.jsonl", ROWS), "c")
    monkeypatch.setattr(query_plan, "CANDIDATE_BUDGET", 3)
    return engine


def _plan(engine: Engine, *terms: str) -> list[str]:
    with engine.connect() as connection:
        return plan_matches(connection, engine.dialect.name, list(terms)).matches


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_rarest_words_are_scored_within_the_budget(corpus: Engine) -> None:
    assert _plan(corpus, "alpha", "zeta") == ['"zeta"']
    assert _plan(corpus, "delta", "alpha", "zeta") == ['"delta" OR "zeta"']  # 2 + 1 documents
    assert _plan(corpus, "delta", "omega", "zeta") == ['"omega" OR "zeta"']  # rarest first: 1 + 1
    # Both past the budget (counted only up to it): all words, else the first of the "rarest".
    assert _plan(corpus, "alpha", "beta") == ['"alpha" AND "beta"', '"alpha"']
    assert _plan(corpus, "kappa", "alpha", "beta") == [
        '"kappa" AND "alpha" AND "beta"',
        '"kappa" AND "alpha"',  # all tie at the cap: query order decides the "commonest"
        '"kappa"',
    ]
    assert _plan(corpus, "alpha") == ['"alpha"']


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_common_words_alone_find_documents_holding_all_of_them_else_the_rarest(corpus: Engine) -> None:
    later = T0 + timedelta(days=30)
    with corpus.connect() as connection:
        both = search_news(connection, "c", "alpha beta", k=20, before=later)
        assert {hit.id for hit in both} == {f"c{i}" for i in range(6)}
        apart = {hit.id for hit in search_news(connection, "c", "alpha kappa", k=20, before=later)}
        assert apart == {*(f"c{i}" for i in range(6)), "g"}  # no document has both: the first alone
        ids = {hit.id for hit in search_news(connection, "c", "gamma alpha", k=20, before=later)}
    assert ids == {"g"}  # gamma is rare enough: alpha is treated as a stop word


def test_every_word_common_ranks_the_newest_documents_before_the_cutoff_first(corpus: Engine) -> None:
    dialect = corpus.dialect.name
    with corpus.connect() as connection:
        assert plan_matches(connection, dialect, ["alpha", "beta"]).newest_first
        assert not plan_matches(connection, dialect, ["alpha", "zeta"]).newest_first
        newest = search_news(connection, "c", "alpha beta", k=2, before=T0 + timedelta(days=30))
        cut = search_news(connection, "c", "beta alpha", k=3, before=T0 + timedelta(days=4))
        rare = search_news(connection, "c", "delta", k=2, before=T0 + timedelta(days=30))
    assert [hit.id for hit in newest] == ["c5", "c4"]  # c0..c5 published on days 0..5
    assert [hit.id for hit in cut] == ["c3", "c2", "c1"]  # day 4 itself is not before the cutoff
    assert {hit.score for hit in newest + cut} == {0.0}  # ranked by recency, not scored
    assert all(hit.score > 0 for hit in rare)  # a rare word is still scored (BM25, ts_rank_cd)


# Every document holds alpha and beta; three share day 3 and two day 1, out of publish order.
TIES = [
    doc("a", 3, "alpha beta"),
    doc("b", 1, "alpha beta"),
    doc("c", 3, "beta alpha"),
    doc("d", 2, "alpha beta"),
    doc("e", 3, "alpha beta", "alpha"),
    doc("f", 5, "alpha beta"),  # published at the cutoff: never returned
    doc("g", 1, "alpha beta"),
    doc("h", 4, "alpha", "beta"),
]


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_both_backends_rank_an_every_word_common_query_alike(
    engine: Engine, sqlite_head: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same corpus, same query: the same documents in the same order, ties included (the later
    imported first), whichever backend holds the corpus."""
    shutil.copyfile(sqlite_head, tmp_path / "arena.db")
    sqlite = make_engine(f"sqlite:///{tmp_path / 'arena.db'}")
    path = write_jsonl(tmp_path / "c.jsonl", TIES)
    monkeypatch.setattr(query_plan, "CANDIDATE_BUDGET", 3)
    ranked: dict[str, list[list[str]]] = {}
    try:
        for backend in (sqlite, engine):
            import_corpus(backend, path, "c")
            with backend.connect() as connection:
                assert plan_matches(connection, backend.dialect.name, ["alpha", "beta"]).newest_first
                runs = (
                    search_news(connection, "c", "alpha beta", k=k, before=T0 + timedelta(days=5))
                    for k in (10, 3)
                )
                ranked[backend.dialect.name] = [[hit.id for hit in hits] for hits in runs]
    finally:
        sqlite.dispose()
    assert ranked["sqlite"] == [["h", "e", "c", "a", "d", "g", "b"], ["h", "e", "c"]]
    assert ranked["postgresql"] == ranked["sqlite"]


def test_on_a_small_corpus_every_word_is_scored(engine: Engine, tmp_path: Path) -> None:
    import_corpus(engine, write_jsonl(tmp_path / "c.jsonl", ROWS), "c")
    plans = _plan(engine, "alpha", "beta", "zeta")
    assert len(plans) == 1
    for term in ("alpha", "beta", "zeta"):
        assert term in plans[0]
