"""``search_news`` on both backends: relevance, plain-text snippets, and query text that is never
parsed as the engine's query syntax."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text
from sqlmodel import Session

from arena.corpus.documents import CorpusError
from arena.corpus.search import MAX_K, NewsQueryError, search_news, search_terms
from arena.corpus.store import import_corpus
from tests.corpus.docs import T0, doc, write_jsonl

LATER = T0 + timedelta(days=365)
DOCS = [
    doc("fed", 1, "Federal Reserve holds interest rates", "The Fed kept rates unchanged in March."),
    doc("ecb", 2, "ECB cuts rates", "The European Central Bank lowered its deposit rate by a quarter point."),
    doc("vote", 3, "Ohio election polls tighten", "Voters in Ohio weigh the economy before the election."),
    doc("storm", 4, "Storm hits coast", "A hurricane made landfall; rates of insurance claims rose."),
    doc("odd", 5, 'OR NOT "quoted" (title:x) NEAR*', 'Symbols: AND | & ! <-> :* \\ " ( )'),
]


@pytest.fixture
def news(engine: Engine, tmp_path: Path) -> Engine:
    import_corpus(engine, write_jsonl(tmp_path / "news.jsonl", DOCS), "news")
    return engine


def _ids(engine: Engine, query: str, *, k: int = 10, before: datetime = LATER) -> list[str]:
    with engine.connect() as connection:
        return [hit.id for hit in search_news(connection, "news", query, k=k, before=before)]


def test_the_most_relevant_documents_come_first(news: Engine) -> None:
    assert _ids(news, "interest rates Fed")[0] == "fed"
    assert _ids(news, "election in Ohio") == ["vote"]
    assert set(_ids(news, "rates")) == {"fed", "ecb", "storm"}
    assert _ids(news, "rates", k=2) == _ids(news, "rates")[:2]


def test_a_hit_carries_the_document_and_a_plain_snippet(news: Engine) -> None:
    with Session(news) as session:  # a Session works as well as a Connection
        (hit,) = search_news(session, "news", "hurricane landfall", k=3, before=LATER)
    assert (hit.id, hit.title, hit.published_at) == ("storm", "Storm hits coast", T0 + timedelta(days=4))
    assert "hurricane" in hit.snippet and "<" not in hit.snippet and hit.score > 0


@pytest.mark.parametrize(
    "query",
    ['title:election OR NOT "x"', "rates AND (fed", "NEAR(rates fed)", "fed* ^rates", "rates:* & !fed | <->"],
)
def test_operators_in_the_query_are_plain_words(news: Engine, query: str) -> None:
    """Each query would be an operator or a syntax error in FTS5 or tsquery; here it is only its words."""
    hits = _ids(news, query)
    assert hits and set(hits) <= {"fed", "ecb", "storm", "vote", "odd"}


@pytest.mark.parametrize("query", ["", "   ", 'AND OR NOT "" () * : | & !', "the of and will", "___"])
def test_a_query_without_searchable_words_gets_a_clear_error(news: Engine, query: str) -> None:
    with pytest.raises(NewsQueryError, match="no searchable words"):
        _ids(news, query)


def test_bad_arguments_get_clear_errors(news: Engine) -> None:
    with pytest.raises(NewsQueryError, match=f"k must be between 1 and {MAX_K}"):
        _ids(news, "rates", k=0)
    with pytest.raises(NewsQueryError, match="no time zone"):
        _ids(news, "rates", before=datetime(2025, 6, 1))
    with (
        news.connect() as connection,
        pytest.raises(CorpusError, match=r"no corpus named 'nope' \(corpora: news\)"),
    ):
        search_news(connection, "nope", "rates", k=1, before=LATER)


def test_search_terms_are_lowercase_distinct_words_without_stop_words() -> None:
    assert search_terms("Will the FED cut rates? fed: rates!") == ["fed", "cut", "rates"]
    assert search_terms("Zürich café 2025") == ["zürich", "café", "2025"]
    assert search_terms("cafe\u0301 ﬁnance") == ["café", "finance"]  # NFKC: composed, unligatured
    assert len(search_terms(" ".join(f"w{i}" for i in range(100)))) == 16


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=60))
def test_any_text_is_a_safe_query(news: Engine, query: str) -> None:
    """Whatever a model writes, the engine never sees syntax: results or the clear error, nothing else."""
    try:
        hits = _ids(news, query)
    except NewsQueryError:
        assert search_terms(query) == []
    else:
        assert set(hits) <= {d["id"] for d in DOCS}


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize("newest_first", [False, True])
def test_sqlite_matches_first_then_reads_their_rows(news: Engine, newest_first: bool) -> None:
    """Driven by the (corpus_id, published_at) index instead, the match would run once per row;
    newest first, FTS5 walks back from the bound itself (no sort of every match)."""
    from arena.corpus.search import _SQLITE, _SQLITE_NEWEST

    with news.begin() as connection:
        connection.exec_driver_sql("ANALYZE")  # statistics that could tempt the planner
        compiled = (_SQLITE_NEWEST if newest_first else _SQLITE).compile(dialect=connection.dialect)
        params = ('"rates"', 1 << 62, 1, "2030-01-01", 10)  # match, bound, corpus_id, before, k
        steps = [row[3] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}", params)]
    assert steps[0].startswith("SCAN corpus_document_fts VIRTUAL TABLE"), steps
    assert any("USING INTEGER PRIMARY KEY" in step for step in steps), steps
    assert newest_first != any("TEMP B-TREE" in step for step in steps), steps


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgres_newest_first_reads_the_publish_time_index_backwards(news: Engine) -> None:
    """No sort of every match: the (corpus_id, published_at) index read from the cutoff back,
    stopped by the LIMIT. Sequential and bitmap scans are off: on five rows reading the table, or
    every match, is cheapest (on a million rows the planner picks it unforced: docs/corpora.md)."""
    from arena.corpus.search import _POSTGRES_NEWEST

    params = {"match": "'rates'", "corpus_id": 1, "before": LATER, "k": 10}
    with news.begin() as connection:
        connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
        connection.exec_driver_sql("SET LOCAL enable_bitmapscan = off")
        plan = "\n".join(
            connection.execute(text(f"EXPLAIN {_POSTGRES_NEWEST.element.text}"), params).scalars()
        )
    assert "Limit" in plan, plan
    assert "Index Scan Backward using ix_corpus_document_corpus_id_published_at" in plan, plan
