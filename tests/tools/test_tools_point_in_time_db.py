"""Leakage property of the market tools over the live, database-backed source, on SQLite and
PostgreSQL: after four syncs of the fake Polymarket (a price move, a market closing, a late
resolution, backfilled history), at every time asked no tool names a market that was not open
then, nor shows a price observed after it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine

from agents.tools import ToolError
from arena.db.market_source import DbMarketSource
from arena.tools.base import RoundFacts
from arena.tools.toolbox import ArenaToolbox
from markets.types import Venue
from tests.fakes.polymarket_server import REAL_MARKETS
from tests.sync.test_sync_pit import key, recorded, times
from tests.tools.test_tools_point_in_time import walk
from tests.tools.world import context

pytestmark = pytest.mark.anyio
__all__ = ["recorded"]  # the fixture: four syncs recorded in the test database

QUERIES = ("will", "election", "price", "bitcoin")


async def answers(source: DbMarketSource, at: datetime) -> list[tuple[str, Any]]:
    facts = RoundFacts.build(
        at, source.snapshot(at), source.open_markets(at), excluded=frozenset(), prices_visible=True
    )
    toolbox = ArenaToolbox(context(facts))
    asked: list[tuple[str, dict[str, Any]]] = [("search_markets", {"query": q, "limit": 25}) for q in QUERIES]
    for index in range(len(REAL_MARKETS)):
        asked += [
            ("price_history", {"market_id": key(index), "days": 30}),
            ("market_details", {"market_id": key(index)}),
        ]
    found = []
    for name, arguments in asked:
        try:
            found.append((name, json.loads(await toolbox.call(name, arguments))))
        except ToolError:
            found.append((name, None))
    return found


async def test_no_market_tool_answers_with_anything_from_after_the_round(recorded: Engine) -> None:
    source = DbMarketSource(recorded, [Venue.POLYMARKET], max_price_age=timedelta(hours=3))
    seen_markets = set()
    for at in times():
        open_ids = {m.market_id for m in source.open_markets(at)}
        for name, answer in await answers(source, at):
            for field, value in walk(answer):
                if field == "market_id":
                    assert value in open_ids, f"{name} named {value}, not open at {at}"
                    seen_markets.add(value)
                if field in ("observed_at", "price_observed_at") and value is not None:
                    assert datetime.fromisoformat(value) <= at, f"{name}: {field} {value} after {at}"
    assert key(3) in seen_markets and len(seen_markets) >= 4  # the property was tested on real answers
