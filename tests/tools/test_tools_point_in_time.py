"""Leakage properties: no market tool ever answers with anything stamped after the round.

At any round time (hypothesis picks it, midnights and their neighbours included), with any
query: every market a tool names was open at that time, every price time it shows is at or
before it, every price it shows is the one the source knew then, no resolution is ever shown,
and the price planted on day ``PLANTED_DAY`` never comes out before that day.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.tools import ToolError
from arena.tools.toolbox import ArenaToolbox
from markets.replay import ReplaySource
from tests.tools.world import FED, PLANTED, PLANTED_DAY, RAIN, ZEBRA, context, day, facts_at, write_world

WORDS = ["rain", "Paris", "Fed", "rates", "zebra", "zoo", "resolves", "YES", "January", "nothing"]
moments = st.one_of(
    st.integers(min_value=-86_400, max_value=32 * 86_400).map(lambda s: day(0) + timedelta(seconds=s)),
    st.integers(min_value=0, max_value=31).flatmap(
        lambda n: st.sampled_from(
            [day(n) - timedelta(microseconds=1), day(n), day(n) + timedelta(microseconds=1)]
        )
    ),
)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> ReplaySource:
    return write_world(tmp_path_factory.mktemp("pit") / "data")


def answers(source: ReplaySource, at: datetime, query: str, days: int) -> list[tuple[str, Any]]:
    """Every market tool's answer at ``at``, for every market id and the query (errors as None)."""
    toolbox = ArenaToolbox(context(facts_at(source, at)))
    asked: list[tuple[str, dict[str, Any]]] = [("search_markets", {"query": query, "limit": 25})]
    for market_id in (RAIN, FED, ZEBRA):
        asked += [
            ("price_history", {"market_id": market_id, "days": days}),
            ("market_details", {"market_id": market_id}),
        ]
    found = []
    for name, arguments in asked:
        try:
            found.append((name, json.loads(asyncio.run(toolbox.call(name, arguments)))))
        except ToolError:  # a refusal names only what was asked: never a leak
            found.append((name, None))
    return found


def walk(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from walk(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v, key)
    else:
        yield key, value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    at=moments,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    days=st.integers(1, 30),
)
def test_no_market_tool_answers_with_anything_from_after_the_round(
    source: ReplaySource, at: datetime, query: str, days: int
) -> None:
    open_ids = {m.market_id for m in source.open_markets(at)}
    known = source.latest_prices([RAIN, FED, ZEBRA], at)
    for name, answer in answers(source, at, query, days):
        if answer is None:
            continue
        for key, value in walk(answer):
            if key == "market_id":
                assert value in open_ids, f"{name} named {value}, not open at {at}"
            if key in ("observed_at", "price_observed_at") and value is not None:
                assert datetime.fromisoformat(value) <= at, f"{name}: {key} {value} after {at}"
            if key in ("price", "YES", "NO") and at < day(PLANTED_DAY):
                assert value != str(PLANTED), f"{name} returned the planted future price at {at}"
            assert "resol" not in key.lower() or key == "background_and_resolution_criteria", key
        if name in ("market_details",) and answer["prices"] is not None:
            assert answer["prices"]["YES"] == str(known[answer["market_id"]].prices["YES"])


def test_the_planted_price_is_served_once_its_day_has_come(source: ReplaySource) -> None:
    """The trap is live: from its day on the planted price is the round's price, so the property
    above would catch a tool that served it early."""
    after = answers(source, day(PLANTED_DAY) + timedelta(hours=1), "rain", 3)
    assert str(PLANTED) in json.dumps([a for _, a in after])
    before = answers(source, day(PLANTED_DAY) - timedelta(microseconds=1), "rain", 3)
    assert str(PLANTED) not in json.dumps([a for _, a in before])
