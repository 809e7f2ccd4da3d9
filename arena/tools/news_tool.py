"""The ``search_news`` tool: documents of the cohort's corpus published before the round time
minus ``tools.news_lag`` (the Autocast competition rules: a document needs a publish time, and
nothing published after the cutoff may be seen).

The corpus search itself (``RoundFacts.news``) is given the cutoff; each hit's publish time is
checked here again, so a search backend that ignored it would still leak nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from agents.tools import ToolError, ToolSpec
from arena.corpus.documents import CorpusError
from arena.corpus.search import search_news
from arena.tools.base import NewsHitLike, NewsSearch, Tool, ToolContext, iso, parameters

MAX_DOCUMENTS = 20
SNIPPET_CHARS = 1_000


def corpus_search(engine: Engine, corpus: str) -> NewsSearch:
    """The cohort's imported corpus as the tool's search: one read per query; a query the corpus
    cannot answer (no searchable words, an unknown corpus) becomes an error result the model reads."""

    def search(query: str, k: int, before: datetime) -> Sequence[NewsHitLike]:
        try:
            with engine.connect() as connection:
                return search_news(connection, corpus, query, k=k, before=before)
        except CorpusError as exc:
            raise ToolError(str(exc)) from None

    return search


def _search_news(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    facts = ctx.facts
    if facts.news is None:
        raise ToolError("no corpus configured for this cohort (tools.corpus); there is no news to search")
    before = facts.at - facts.news_lag
    hits = facts.news(args["query"], args["k"], before)
    return {
        "published_before": iso(before),
        "documents": [
            {
                "id": h.id,
                "title": h.title,
                "published_at": iso(h.published_at),
                "source": h.source,
                "url": h.url,
                "snippet": h.snippet[:SNIPPET_CHARS],
                "score": round(h.score, 3),
            }
            for h in hits
            if h.published_at < before
        ][: args["k"]],
    }


SEARCH_NEWS = Tool(
    ToolSpec(
        "search_news",
        "Search the news corpus: the k documents most relevant to the query, published before the day "
        "before now, best first. When every word of the query is very common (each in thousands of "
        "documents), the newest documents holding its words come first instead, with score 0.",
        parameters(
            {
                "query": {"type": "string", "maxLength": 500},
                "k": {"type": "integer", "minimum": 1, "maximum": MAX_DOCUMENTS, "default": 5},
            },
            required=["query"],
        ),
    ),
    _search_news,
    blocking=True,
)
