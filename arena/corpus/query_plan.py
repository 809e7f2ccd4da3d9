"""Which of a query's words a search matches on: all of them, unless that would mean scoring a
large part of the corpus.

Ranking costs time per *matching* document (the engine scores each one, then keeps the best
``k``), and a word found in many documents (``said``, ``market``, ``2025`` in a news dump)
matches a large part of a million documents while adding little to a score (BM25's inverse
document frequency is small for it). So the words are taken rarest first while their documents
add up to at most ``CANDIDATE_BUDGET``; the rest are treated as stop words for this corpus. When
even the rarest word is that common, the query asks for documents holding *all* its words (a
much smaller set); if none does, all but the commonest word, and so on down to the two rarest,
then the rarest word alone. Such a query is ranked by recency, not scored, on both backends (so
they rank it alike): the newest documents holding the words come first
(``SearchPlan.newest_first``). Scoring them would cost more than the 50 ms a search may take on
SQLite: FTS5's BM25 computes each word's inverse document frequency by walking the word's whole
posting list (a word in most of a million documents: 15-35 ms each, whatever rowid range is
asked for), and words that common weigh almost nothing in the score anyway. The newest documents
are found by walking back from the publish-time bound, which stops after ``k`` of them: on
SQLite through the full-text rowids (``arena.corpus.rowids``), on PostgreSQL through the
``(corpus_id, published_at)`` index.

Word frequencies come from the index itself: SQLite counts a word's documents up to the budget
(cheap: the index lists them in order), PostgreSQL reads the planner's estimate, which comes
from the most-common-lexeme statistics the import refreshes (``ANALYZE``; 10,000 lexemes are
tracked, so a rare word's estimate is small, not the 1,000th word's frequency). Either way they cover
the whole table, not one corpus: a heuristic that decides which words are scored, never which
documents may be seen (the publish-time bound is in every query regardless).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text

from arena.corpus.store import Reader

CANDIDATE_BUDGET = 5_000

_SQLITE_COUNT = text(
    "SELECT count(*) FROM (SELECT 1 FROM corpus_document_fts WHERE corpus_document_fts MATCH :match "
    "LIMIT :cap)"
)
_POSTGRES_ESTIMATE = text(
    "EXPLAIN (FORMAT JSON) SELECT 1 FROM corpus_document WHERE search @@ to_tsquery('english', :match)"
)


def fts5_any(terms: list[str]) -> str:
    """FTS5 query matching any of ``terms``: each a double-quoted string, so never an operator."""
    return " OR ".join(f'"{term}"' for term in terms)


def fts5_all(terms: list[str]) -> str:
    return " AND ".join(f'"{term}"' for term in terms)


def tsquery_any(terms: list[str]) -> str:
    """``to_tsquery`` input matching any of ``terms``: each a quoted lexeme, so never an operator."""
    return " | ".join(f"'{term}'" for term in terms)


def tsquery_all(terms: list[str]) -> str:
    return " & ".join(f"'{term}'" for term in terms)


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """The match expressions to try in order, until one finds a document, and whether the
    documents they find are ranked newest first (every word common) rather than scored."""

    matches: list[str]
    newest_first: bool = False


def plan_matches(reader: Reader, dialect: str, terms: list[str]) -> SearchPlan:
    """How to search for ``terms`` (see the module doc)."""
    any_of, all_of = (fts5_any, fts5_all) if dialect == "sqlite" else (tsquery_any, tsquery_all)
    counts = sorted((_documents(reader, dialect, any_of([term])), i) for i, term in enumerate(terms))
    chosen: list[int] = []
    total = 0
    for count, index in counts:
        if total + count > CANDIDATE_BUDGET:
            break
        chosen.append(index)
        total += count
    if chosen:
        return SearchPlan([any_of([terms[i] for i in sorted(chosen)])])
    by_rarity = [terms[i] for _, i in counts]
    # Every word is common: all of them, then without the commonest one at a time, then the rarest.
    matches = [all_of(by_rarity[:size]) for size in range(len(terms), 1, -1)] + [any_of(by_rarity[:1])]
    return SearchPlan(matches, newest_first=True)


def _documents(reader: Reader, dialect: str, match: str) -> int:
    """How many documents ``match`` finds, counted up to just past the budget or estimated."""
    if dialect == "sqlite":
        return int(reader.execute(_SQLITE_COUNT, {"match": match, "cap": CANDIDATE_BUDGET + 1}).scalar_one())
    plan = reader.execute(_POSTGRES_ESTIMATE, {"match": match}).scalar_one()
    return int(plan[0]["Plan"]["Plan Rows"])
