"""The research tools against a replay dataset: what each answers, and what it refuses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from agents.tools import ToolError
from agents.types import PortfolioView, PositionView
from arena.tools.base import RoundFacts, ToolContext
from arena.tools.toolbox import TOOLS, ArenaToolbox
from markets.replay import ReplaySource
from markets.types import Market, MarketSnapshot
from portfolio.units import MarketId, Money, Price, Shares
from tests.tools.world import FED, RAIN, ZEBRA, context, day, facts_at, write_world


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> ReplaySource:
    return write_world(tmp_path_factory.mktemp("world") / "data")


def ask(ctx: ToolContext, name: str, **arguments: Any) -> Any:
    return json.loads(asyncio.run(ArenaToolbox(ctx).call(name, arguments)))


def refused(ctx: ToolContext, name: str, **arguments: Any) -> str:
    with pytest.raises(ToolError) as caught:
        asyncio.run(ArenaToolbox(ctx).call(name, arguments))
    return str(caught.value)


def test_the_toolbox_offers_every_tool_with_a_strict_schema() -> None:
    names = [t.spec.name for t in TOOLS]
    assert names == ["price_history", "market_details", "search_markets", "portfolio", "search_news"]
    assert len(set(names)) == len(names)
    assert all(t.spec.parameters["additionalProperties"] is False for t in TOOLS)


def test_price_history_gives_the_daily_closes_up_to_the_round(source: ReplaySource) -> None:
    ctx = context(facts_at(source, day(5.5)))
    answer = ask(ctx, "price_history", market_id=RAIN, days=3)
    assert answer["outcome"] == "YES"
    assert [(c["day"], c["price"]) for c in answer["closes"]] == [
        ("2025-01-04", "0.33"),
        ("2025-01-05", "0.34"),
        ("2025-01-06", "0.35"),
    ]
    assert len(ask(ctx, "price_history", market_id=RAIN)["closes"]) == 6  # default 14 days; 6 known


def test_market_details_shows_the_venue_text_and_prices_as_of_the_round(source: ReplaySource) -> None:
    answer = ask(context(facts_at(source, day(3))), "market_details", market_id=RAIN)
    assert answer["question"] == "Will it rain in Paris on 2025-01-20?"
    assert answer["background_and_resolution_criteria"].startswith("Resolves YES if Meteo-France")
    assert answer["url"] == "https://polymarket.com/event/rain" and answer["close_time"].startswith(
        "2025-01-23"
    )
    assert answer["prices"] == {"YES": "0.33", "NO": "0.67"}
    assert answer["price_observed_at"].startswith("2025-01-04")


def test_markets_not_open_at_the_round_are_unknown_to_every_tool(source: ReplaySource) -> None:
    before_zebra, after_fed = context(facts_at(source, day(14))), context(facts_at(source, day(10)))
    assert "no market 'manifold:zebra' is open" in refused(before_zebra, "market_details", market_id=ZEBRA)
    assert "no market 'polymarket:fed' is open" in refused(after_fed, "price_history", market_id=FED)
    assert ask(before_zebra, "search_markets", query="zebra zoo")["results"] == []
    found = ask(context(facts_at(source, day(15))), "search_markets", query="zebra zoo")["results"]
    assert [r["market_id"] for r in found] == [ZEBRA]


def test_a_closed_market_is_unknown_to_every_tool_even_if_a_source_lists_it(source: ReplaySource) -> None:
    # a source that forgot close times: FED listed open on day 5 though it closed on day 4
    at = day(5)

    def forgot(market: Market) -> Market:
        return replace(market, close_time=day(4)) if market.market_id == FED else market

    listed = [forgot(m) for m in source.open_markets(at)]
    snapshot = MarketSnapshot(
        at, tuple(replace(e, market=forgot(e.market)) for e in source.snapshot(at).entries)
    )
    ctx = context(RoundFacts.build(at, snapshot, listed, excluded=frozenset(), prices_visible=True))
    assert "no market 'polymarket:fed' is open" in refused(ctx, "market_details", market_id=FED)
    assert "is open" in refused(ctx, "price_history", market_id=FED)
    assert ask(ctx, "search_markets", query="Fed cut rates")["results"] == []
    assert ask(ctx, "search_markets", query="Fed cut rates")["open_markets"] == 1  # RAIN alone


def test_excluded_markets_are_unknown_to_the_tools(source: ReplaySource) -> None:
    ctx = context(facts_at(source, day(3), excluded=frozenset({RAIN})))
    assert "is open" in refused(ctx, "market_details", market_id=RAIN)
    assert all(r["market_id"] != RAIN for r in ask(ctx, "search_markets", query="rain Paris")["results"])


def test_search_markets_ranks_by_relevance_and_shows_prices(source: ReplaySource) -> None:
    ctx = context(facts_at(source, day(16)))
    results = ask(ctx, "search_markets", query="Paris rain")["results"]
    assert [r["market_id"] for r in results] == [RAIN, ZEBRA]  # both say Paris; only one says rain
    assert results[0]["relevance"] > results[1]["relevance"] > 0
    assert results[0]["prices"] == {"YES": "0.46", "NO": "0.54"}
    assert len(ask(ctx, "search_markets", query="Paris", limit=1)["results"]) == 1


def test_hidden_prices_stay_hidden_in_every_tool(source: ReplaySource) -> None:
    hidden_all = context(facts_at(source, day(3), prices_visible=False))
    hidden_rain = context(facts_at(source, day(3), hidden=frozenset({RAIN})))
    for ctx in (hidden_all, hidden_rain):
        assert "hidden" in refused(ctx, "price_history", market_id=RAIN)
        assert ask(ctx, "market_details", market_id=RAIN)["prices"] is None
        assert ask(ctx, "search_markets", query="rain")["results"][0]["prices"] is None
    assert ask(hidden_rain, "market_details", market_id=FED)["prices"] == {"YES": "0.2", "NO": "0.8"}


def test_portfolio_is_the_agents_own(source: ReplaySource) -> None:
    position = PositionView(
        "p-1",
        MarketId(RAIN),
        "YES",
        Shares(Decimal(10)),
        Money(Decimal(4)),
        Price(Decimal("0.5")),
        Money(Decimal(5)),
    )
    view = PortfolioView(cash=Money(Decimal(996)), max_bet=Money(Decimal("99.6")), positions=(position,))
    answer = ask(ToolContext(facts_at(source, day(3)), view), "portfolio")
    assert answer["cash"] == "996" and answer["total_value"] == "1001"
    assert [(p["position_id"], p["shares"], p["value"]) for p in answer["positions"]] == [("p-1", "10", "5")]


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    published_at: datetime
    url: str | None
    source: str | None
    snippet: str
    score: float


def test_search_news_without_a_corpus_says_so(source: ReplaySource) -> None:
    ctx = context(facts_at(source, day(3)))
    assert "no corpus configured" in refused(ctx, "search_news", query="rain")


def test_search_news_asks_for_documents_before_the_lag_and_drops_any_later_one(source: ReplaySource) -> None:
    asked: list[tuple[str, int, datetime]] = []
    at = day(5)

    def search(query: str, k: int, before: datetime) -> Sequence[Hit]:
        asked.append((query, k, before))
        return [
            Hit("late", "Leak", before, None, None, "published at the cutoff", 9.0),
            Hit("ok", "Rain ahead", before - timedelta(seconds=1), "https://x", "wire", "text", 1.0),
        ]

    ctx = context(facts_at(source, at, news=search, news_lag=timedelta(days=2)))
    answer = ask(ctx, "search_news", query="rain", k=3)
    assert asked == [("rain", 3, at - timedelta(days=2))]
    assert [d["id"] for d in answer["documents"]] == ["ok"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"market_id": RAIN, "days": 0}, "days: must be between 1 and 30, got 0"),
        ({"market_id": RAIN, "days": "3"}, "days: expected an integer, got str"),
        ({"market_id": RAIN, "days": True}, "days: expected an integer, got bool"),
        ({"market_id": RAIN, "weeks": 1}, "unknown argument(s) 'weeks'"),
        ({"days": 3}, "missing argument(s) market_id"),
        ({"market_id": " "}, "market_id: must not be empty"),
        ({"market_id": "x" * 201}, "market_id: at most 200 characters"),
    ],
)
def test_arguments_are_checked_without_coercion(
    source: ReplaySource, arguments: dict[str, Any], message: str
) -> None:
    assert message in refused(context(facts_at(source, day(3))), "price_history", **arguments)


def test_facts_are_built_from_the_round_snapshot(source: ReplaySource) -> None:
    facts: RoundFacts = facts_at(source, day(12))
    assert set(facts.markets) == {RAIN} and set(facts.entries) == {RAIN}
