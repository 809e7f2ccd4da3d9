"""The ``search_news`` tool: documents of the cohort's corpus published before the round time
minus ``tools.news_lag`` (seed 001: a document needs a publish time, and nothing published after
the cutoff may be seen).

The corpus search itself (``RoundFacts.news``) is given the cutoff; each hit's publish time is
checked here again, so a search backend that ignored it would still leak nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.tools import ToolError, ToolSpec
from arena.tools.base import Tool, ToolContext, iso, parameters

MAX_DOCUMENTS = 20
SNIPPET_CHARS = 1_000


def _search_news(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    facts = ctx.facts
    if facts.news is None:
        if facts.corpus is None:
            raise ToolError("no corpus configured for this cohort (tools.corpus); there is no news to search")
        raise ToolError(f"corpus {facts.corpus!r} is configured but no corpus search is installed")
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
        "Search the news corpus: the k most relevant documents published before the day before now.",
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
