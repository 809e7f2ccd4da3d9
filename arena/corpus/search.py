"""``search_news``: documents ranked by text relevance, strictly as of a point in time.

Only documents published *before* ``before`` can come back: the bound is in the query's WHERE
clause, next to the corpus, so no ranking, snippet or limit can reach past it. The caller passes
the round's time minus the news lag.

The query text comes from a model or a person, so it is never handed to the engine's query
syntax: it is cut into words (letters and digits), common English stop words are dropped, and
each word goes in as a quoted term (SQLite FTS5: ``"word"``; PostgreSQL: a quoted ``tsquery``
lexeme), OR-ed with the others (``arena.corpus.query_plan`` says which words, on a large corpus).
Operators, quotes, parentheses and column filters in the text are thus plain separators.
Ranking: BM25 on SQLite (title weighted twice the body), ``ts_rank_cd`` on PostgreSQL (title
lexemes weighted A, body B); on both, a query whose every word is common is ranked by recency
(see ``arena.corpus.query_plan``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, text
from sqlalchemy.sql.elements import TextClause
from sqlmodel import Session

from arena.corpus.documents import CorpusError
from arena.corpus.query_plan import plan_matches
from arena.corpus.rowids import before_bound
from arena.corpus.store import Reader, corpus_id
from arena.db.types import UTCDateTime

MAX_K = 50
MAX_TERMS = 16  # longer queries keep their first 16 distinct words (each costs a frequency probe)
_WORD = re.compile(r"[^\W_]+")
# Words too common to say anything about relevance (OR-ed in, they would match nearly everything).
_STOP_WORDS = """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves"""
STOP_WORDS = frozenset(_STOP_WORDS.split())


class NewsQueryError(CorpusError):
    """A query that cannot be searched (no words, bad ``k``, naive ``before``): the message is
    written for the model that sent it."""


@dataclass(frozen=True, slots=True)
class NewsHit:
    """One search result; ``snippet`` is plain text from the document (no markup added)."""

    id: str
    title: str
    published_at: datetime
    url: str | None
    source: str | None
    snippet: str
    score: float


def search_terms(query: str) -> list[str]:
    """The query's distinct searchable words, lower-case, in order (at most ``MAX_TERMS``); NFKC
    first, so a decomposed accent or a ligature (``ﬁ``) reads as the letters it stands for."""
    words = (w for w in _WORD.findall(unicodedata.normalize("NFKC", query).lower()) if w not in STOP_WORDS)
    return list(dict.fromkeys(words))[:MAX_TERMS]


def search_news(reader: Reader, corpus: str, query: str, *, k: int, before: datetime) -> list[NewsHit]:
    """The ``k`` documents of ``corpus`` most relevant to ``query`` among those published strictly
    before ``before``, best first (ties: on SQLite the earlier published, on PostgreSQL the earlier
    imported). A query whose every word is common is ranked newest first instead, score 0, on
    both backends (ties: the later imported first).
    ``NewsQueryError`` for a query without searchable words or a ``k`` outside 1..``MAX_K``;
    ``CorpusError`` for an unknown corpus."""
    if before.tzinfo is None:
        raise NewsQueryError(f"before={before.isoformat()} has no time zone")
    if not 1 <= k <= MAX_K:
        raise NewsQueryError(f"k must be between 1 and {MAX_K}, got {k}")
    terms = search_terms(query)
    if not terms:
        raise NewsQueryError(
            f"query {query[:80]!r} has no searchable words (letters or digits, not stop words)"
        )
    dialect = (reader.get_bind() if isinstance(reader, Session) else reader).dialect.name
    if dialect == "postgresql":
        # A search over many rows looks costly enough for PostgreSQL to JIT-compile it, which takes
        # longer than the search itself; off for this transaction only.
        reader.execute(text("SELECT set_config('jit', 'off', true)"))
    params: dict[str, object] = {"corpus_id": corpus_id(reader, corpus), "before": before, "k": k}
    plan = plan_matches(reader, dialect, terms)
    statement = _POSTGRES_NEWEST if plan.newest_first else _POSTGRES
    if dialect == "sqlite":
        statement = _SQLITE_NEWEST if plan.newest_first else _SQLITE
        params["bound"] = before_bound(before)
    for match in plan.matches:
        rows = reader.execute(statement, {**params, "match": match}).all()
        if rows:
            break
    return [
        NewsHit(r.doc_id, r.title, r.published_at, r.url, r.source, r.snippet, float(r.score)) for r in rows
    ]


# CROSS JOIN fixes SQLite's join order: matches first, then their rows. Left free, the planner may
# walk the (corpus_id, published_at) index and run the full-text match once per row: seconds.
# ``rowid < :bound`` is the publish-time bound as FTS5 can apply it while walking (ids are in
# publish order: arena.corpus.rowids); ``d.published_at < :before`` is the bound itself.
def _typed(sql: str) -> TextClause:
    return text(sql).bindparams(bindparam("before", type_=UTCDateTime()))


_SQLITE = _typed(
    """
    SELECT d.doc_id, d.title, d.published_at, d.url, d.source,
           snippet(corpus_document_fts, 1, '', '', '…', 32) AS snippet,
           -bm25(corpus_document_fts, 2.0, 1.0) AS score
    FROM corpus_document_fts CROSS JOIN corpus_document AS d ON d.id = corpus_document_fts.rowid
    WHERE corpus_document_fts MATCH :match AND corpus_document_fts.rowid < :bound
      AND d.corpus_id = :corpus_id AND d.published_at < :before
    ORDER BY score DESC, d.id
    LIMIT :k
    """
).columns(published_at=UTCDateTime())

# Every word common (arena.corpus.query_plan): the newest matches, walking back from the bound.
_SQLITE_NEWEST = _typed(
    """
    SELECT d.doc_id, d.title, d.published_at, d.url, d.source,
           snippet(corpus_document_fts, 1, '', '', '…', 32) AS snippet, 0.0 AS score
    FROM corpus_document_fts CROSS JOIN corpus_document AS d ON d.id = corpus_document_fts.rowid
    WHERE corpus_document_fts MATCH :match AND corpus_document_fts.rowid < :bound
      AND d.corpus_id = :corpus_id AND d.published_at < :before
    ORDER BY corpus_document_fts.rowid DESC
    LIMIT :k
    """
).columns(published_at=UTCDateTime())

_POSTGRES = _typed(
    """
    SELECT d.doc_id, d.title, d.published_at, d.url, d.source, best.score,
           ts_headline('english', d.text, to_tsquery('english', :match),
                       'StartSel="", StopSel="", MaxWords=32, MinWords=16')
               AS snippet
    FROM (
        SELECT id, ts_rank_cd(search, to_tsquery('english', :match)) AS score
        FROM corpus_document
        WHERE search @@ to_tsquery('english', :match) AND corpus_id = :corpus_id AND published_at < :before
        ORDER BY score DESC, id
        LIMIT :k
    ) AS best JOIN corpus_document AS d ON d.id = best.id
    ORDER BY best.score DESC, d.id
    """
).columns(published_at=UTCDateTime())

# Every word common: the newest matches, read backwards through the (corpus_id, published_at)
# index, which stops after ``k`` of them. Ties (one publish time): the later imported first, as on
# SQLite, where they share a publish second and the later imported has the larger rowid.
_POSTGRES_NEWEST = _typed(
    """
    SELECT d.doc_id, d.title, d.published_at, d.url, d.source, 0.0 AS score,
           ts_headline('english', d.text, to_tsquery('english', :match),
                       'StartSel="", StopSel="", MaxWords=32, MinWords=16')
               AS snippet
    FROM (
        SELECT id, published_at
        FROM corpus_document
        WHERE search @@ to_tsquery('english', :match) AND corpus_id = :corpus_id AND published_at < :before
        ORDER BY published_at DESC, id DESC
        LIMIT :k
    ) AS newest JOIN corpus_document AS d ON d.id = newest.id
    ORDER BY newest.published_at DESC, newest.id DESC
    """
).columns(published_at=UTCDateTime())
