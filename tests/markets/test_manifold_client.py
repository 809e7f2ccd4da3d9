"""The Manifold client against the fake Manifold on loopback."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import httpx
import pytest

from markets.http import JsonApi, RetryPolicy, VenueHTTPError
from markets.manifold.client import ManifoldClient
from tests.fakes.manifold_server import DOCS_BETS, DOCS_LITE_MARKET, FakeManifold, lite_market
from tests.fakes.venue_server import Fault

pytestmark = pytest.mark.anyio
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=2.0)


@pytest.fixture
def fake():
    with FakeManifold() as venue:
        yield venue


async def test_market_pages_walk_back_with_before(fake) -> None:
    for i in range(4):
        fake.add(lite_market(i))
    fake.add(copy.deepcopy(DOCS_LITE_MARKET) | {"lastBetTime": 1})
    async with httpx.AsyncClient() as http:
        pages = [
            p async for p in ManifoldClient(JsonApi(http, fake.url, policy=FAST)).market_pages(page_size=2)
        ]
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [m["id"] for p in pages for m in p][-1] == "EvIhzcJXwhL0HavaszD7"  # oldest last bet comes last
    seen = fake.requests_to("/v0/markets")
    ids = [m["id"] for p in pages for m in p]
    assert [s.query.get("before") for s in seen] == [None, [ids[1]], [ids[3]]]
    assert all(s.query["sort"] == ["last-bet-time"] and s.query["order"] == ["desc"] for s in seen)


async def test_single_market_and_404(fake) -> None:
    fake.add(lite_market(3))
    async with httpx.AsyncClient() as http:
        client = ManifoldClient(JsonApi(http, fake.url, policy=FAST))
        market = await client.market("0sEPlhcgPU")
        assert market is not None and market["textDescription"].startswith("Resolves per the creator")
        assert await client.market("nope") is None


async def test_bets_are_fetched_after_a_time_and_retried_on_429(fake) -> None:
    fake.add(lite_market(0), bets=copy.deepcopy(DOCS_BETS))
    fake.fail("/v0/bets", Fault(status=429, retry_after="0"))
    async with httpx.AsyncClient() as http:
        client = ManifoldClient(JsonApi(http, fake.url, policy=FAST))
        bets = await client.bets("0587u5Mk7ng2NaOkgCu1", datetime(2022, 8, 2, 23, 26, tzinfo=UTC))
        assert [b["id"] for b in bets] == ["yXB8lVbs86TKkhWA1FVi"]
        fake.fail("/v0/bets", Fault(status=500), times=3)
        with pytest.raises(VenueHTTPError, match="HTTP 500; gave up after 3 attempts"):
            await client.bets("0587u5Mk7ng2NaOkgCu1", datetime(2022, 1, 1, tzinfo=UTC))
    assert fake.requests_to("/v0/bets")[-1].query["afterTime"] == ["1640995200000"]
