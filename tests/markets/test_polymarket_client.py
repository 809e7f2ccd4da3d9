"""Gamma and CLOB clients against the fake Polymarket on loopback (real HTTP, documented wire shapes)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest

from markets.http import JsonApi, PayloadError, RetryPolicy
from markets.polymarket.client import ClobClient, GammaClient
from tests.fakes.polymarket_server import FakePolymarket, real_market, token_ids
from tests.fakes.venue_server import Fault

pytestmark = pytest.mark.anyio
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=2.0)


@pytest.fixture
def fake():
    with FakePolymarket() as venue:
        yield venue


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _gamma(fake: FakePolymarket, http: httpx.AsyncClient) -> GammaClient:
    return GammaClient(JsonApi(http, fake.url, policy=FAST))


def _clob(fake: FakePolymarket, http: httpx.AsyncClient) -> ClobClient:
    return ClobClient(JsonApi(http, fake.url, policy=FAST))


async def test_keyset_pages_follow_after_cursor_to_the_end_resending_filters(fake, http) -> None:
    fake.populate(250)
    filters = [("closed", False), ("order", "volumeNum"), ("ascending", False), ("liquidity_num_min", "1000")]
    pages = [page async for page in _gamma(fake, http).market_pages(filters)]
    assert [len(p) for p in pages] == [100, 100, 50]
    ids = [m["id"] for p in pages for m in p]
    assert len(set(ids)) == 250 and ids[0] == "700000"  # largest volume first
    seen = fake.requests_to("/markets/keyset")
    assert [("after_cursor" in s.query) for s in seen] == [False, True, True]
    assert all(s.query["closed"] == ["false"] and s.query["liquidity_num_min"] == ["1000"] for s in seen)
    assert all("offset" not in s.query and "cursor" not in s.query for s in seen)


async def test_closed_must_be_sent_explicitly(fake, http) -> None:
    with pytest.raises(ValueError, match="pass 'closed' explicitly"):
        async for _ in _gamma(fake, http).market_pages([("order", "volumeNum")]):
            pass


async def test_a_cursor_that_repeats_stops_pagination_with_an_error(fake, http) -> None:
    fake.populate(150)
    fake.fail(
        "/markets/keyset", Fault(body=json.dumps({"markets": [], "next_cursor": "MA=="}).encode()), times=2
    )
    with pytest.raises(PayloadError, match="next_cursor 'MA==' is invalid or repeats; pagination stalled"):
        async for _ in _gamma(fake, http).market_pages([("closed", False)]):
            pass


async def test_events_keyset_embeds_markets(fake, http) -> None:
    fake.add(real_market(0))
    fake.add(real_market(1))
    fake.add_event("2890", ["560000", "560001"], title="Elections", volume=1.5e6)
    pages = [page async for page in _gamma(fake, http).event_pages([("closed", False)])]
    assert [m["id"] for m in pages[0][0]["markets"]] == ["560000", "560001"]


async def test_lookup_by_condition_ids_respects_closed_and_single_market_404(fake, http) -> None:
    fake.add(real_market(0))
    fake.add(real_market(1, closed=True))
    client = _gamma(fake, http)
    conditions = [real_market(0)["conditionId"], real_market(1)["conditionId"]]
    assert [m["id"] for m in await client.markets_by_condition_ids(conditions, closed=False)] == ["560000"]
    assert [m["id"] for m in await client.markets_by_condition_ids(conditions, closed=True)] == ["560001"]
    assert (await client.market("560001") or {})["closed"] is True
    assert await client.market("999") is None


async def test_midpoints_in_batches_with_reasons_for_missing_tokens(fake, http) -> None:
    fake.populate(300)  # 600 tokens: two POST /midpoints batches of at most 500
    fake.set_mid(token_ids(real_market(0)["conditionId"])[0], "0.42")
    tokens = [t for m in fake.markets.values() for t in json.loads(m["clobTokenIds"])] + ["404"]
    mids = await _clob(fake, http).midpoints(tokens)
    assert len(mids) == 601 and all(isinstance(mids[t], Decimal) for t in tokens[:-1])
    assert mids["404"] == "absent from the /midpoints response (no order book?)"
    assert sorted(len(s.body) for s in fake.requests_to("/midpoints")) == [101, 500]


async def test_failed_midpoints_batch_falls_back_to_single_midpoints(fake, http) -> None:
    fake.add(real_market(0))
    yes, no = token_ids(real_market(0)["conditionId"])
    fake.fail("/midpoints", Fault(status=500), times=FAST.attempts)
    fake.set_mid(no, None)
    mids = await _clob(fake, http).midpoints([yes, no])
    assert mids[yes] == Decimal("0.365")
    assert isinstance(mids[no], str) and "HTTP 404" in mids[no] and "No orderbook exists" in mids[no]
    assert len(fake.requests_to("/midpoint")) == 2


async def test_books_give_best_bid_and_ask(fake, http) -> None:
    fake.add(real_market(3))
    yes, no = token_ids(real_market(3)["conditionId"])
    quotes = await _clob(fake, http).books([yes, no, "404"])
    assert quotes[yes] == (Decimal("0.145"), Decimal("0.155")) and quotes[no] == (
        Decimal("0.845"),
        Decimal("0.855"),
    )
    assert quotes["404"] == "absent from /books response"
    assert await _clob(fake, http).book(yes) == (Decimal("0.145"), Decimal("0.155"))


async def test_price_history_asks_for_the_token_id(fake, http) -> None:
    yes = token_ids(real_market(0)["conditionId"])[0]
    start = int(datetime(2026, 8, 20, tzinfo=UTC).timestamp())
    fake.histories[yes] = [{"t": start + h * 3600, "p": 0.36 + h / 1000} for h in range(5)]
    points = await _clob(fake, http).price_history(
        yes, datetime(2026, 8, 20, 1, tzinfo=UTC), datetime(2026, 8, 20, 3, tzinfo=UTC), 60
    )
    assert [p for _, p in points] == [Decimal("0.361"), Decimal("0.362"), Decimal("0.363")]
    assert fake.requests_to("/prices-history")[0].query["market"] == [yes]
