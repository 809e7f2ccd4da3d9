"""The market tools: ``price_history``, ``market_details`` and ``search_markets``.

Each answers from the round's ``RoundFacts`` only (see ``arena.tools.base``): markets open at the
round time, prices and histories from the round's snapshot, never a resolution. Prices are left
out (``null``) wherever the round hides them from the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from agents.tools import ToolError, ToolSpec
from arena.tools.base import RoundFacts, Tool, ToolContext, iso, parameters, prices_json
from arena.tools.relevance import TextIndex
from markets.types import Market

MAX_HISTORY_DAYS = 30
DESCRIPTION_CHARS = 4_000  # of one market's background text in market_details
SEARCH_DESCRIPTION_CHARS = 300
MAX_RESULTS = 25

_MARKET_ID = {"type": "string", "maxLength": 200, "description": "A market id, e.g. 'polymarket:0x12ab'."}


def _price_history(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    facts = ctx.facts
    market = facts.market(args["market_id"])
    if not facts.shows_price(market.market_id):
        raise ToolError(f"prices of {market.market_id} are hidden from you at this round")
    entry = facts.entries.get(market.market_id)
    if entry is None or not entry.history:
        raise ToolError(f"no recent price of {market.market_id} is known at this round")
    days = args["days"]
    first_day = facts.at.date().toordinal() - days + 1
    closes: dict[date, tuple[datetime, Decimal]] = {}
    for observed_at, price in entry.history:  # oldest first: the last point of a day is its close
        if observed_at <= facts.at and observed_at.date().toordinal() >= first_day:
            closes[observed_at.date()] = (observed_at, price)
    return {
        "market_id": market.market_id,
        "outcome": market.outcomes[0],
        "as_of": iso(facts.at),
        "closes": [
            {"day": day.isoformat(), "observed_at": iso(at), "price": str(price)}
            for day, (at, price) in sorted(closes.items())
        ],
    }


def _market_details(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    facts = ctx.facts
    market = facts.market(args["market_id"])
    description = market.description
    clipped = len(description) > DESCRIPTION_CHARS
    return {
        "market_id": market.market_id,
        "venue": market.venue.value,
        "question": market.question,
        "outcomes": list(market.outcomes),
        "background_and_resolution_criteria": description[:DESCRIPTION_CHARS]
        + (" …[cut]" if clipped else ""),
        "category": market.category,
        "open_time": iso(market.open_time),
        "close_time": iso(market.close_time),
        "url": market.url,
        **_price_fields(facts, market),
    }


def _search_markets(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    facts = ctx.facts
    index: TextIndex = facts.cached(
        "markets",
        lambda: TextIndex.build((k, m.question, m.description) for k, m in facts.markets.items()),
    )
    found = index.search(args["query"], args["limit"])
    results = []
    for market_id, score in found:
        market = facts.markets[market_id]
        results.append(
            {
                "market_id": market_id,
                "question": market.question,
                "description": market.description[:SEARCH_DESCRIPTION_CHARS],
                "outcomes": list(market.outcomes),
                "close_time": iso(market.close_time),
                "relevance": round(score, 3),
                **_price_fields(facts, market),
            }
        )
    return {"as_of": iso(facts.at), "open_markets": len(facts.markets), "results": results}


def _price_fields(facts: RoundFacts, market: Market) -> dict[str, Any]:
    """The market's prices in the round's snapshot, or null where unknown or hidden."""
    entry = facts.entries.get(market.market_id)
    if entry is None or not facts.shows_price(market.market_id):
        return {"prices": None, "price_observed_at": None}
    return {"prices": prices_json(entry.price.prices), "price_observed_at": iso(entry.price.observed_at)}


PRICE_HISTORY = Tool(
    ToolSpec(
        "price_history",
        "Daily closing prices of a market's first outcome (YES for a YES/NO market) over the last "
        f"`days` days up to now, oldest first (at most {MAX_HISTORY_DAYS} days).",
        parameters(
            {
                "market_id": _MARKET_ID,
                "days": {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY_DAYS, "default": 14},
            },
            required=["market_id"],
        ),
    ),
    _price_history,
)

MARKET_DETAILS = Tool(
    ToolSpec(
        "market_details",
        "A market open now: its question, outcomes, background and resolution criteria as the "
        "venue wrote them, open and close times, venue link and current prices.",
        parameters({"market_id": _MARKET_ID}, required=["market_id"]),
    ),
    _market_details,
)

SEARCH_MARKETS = Tool(
    ToolSpec(
        "search_markets",
        "Search every market open now (not only those listed to you) by words of its question and "
        "description; the most relevant first, with current prices.",
        parameters(
            {
                "query": {"type": "string", "maxLength": 500},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": 10},
            },
            required=["query"],
        ),
    ),
    _search_markets,
)
