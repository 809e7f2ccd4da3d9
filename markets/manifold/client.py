"""Async client for Manifold API v0 reads: market listings, single markets and bets.

Manifold allows 500 requests per minute per IP; the client keeps to 80 % of that.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from markets.http import JsonApi, PayloadError, VenueHTTPError, as_list, as_object, budget

MANIFOLD_URL = "https://api.manifold.markets"
PAGE = 1000  # the documented maximum for /v0/markets and /v0/bets


class ManifoldClient:
    def __init__(self, api: JsonApi) -> None:
        self._api = api
        self._limiter = budget(500, 60)

    async def market_pages(
        self, *, sort: str = "last-bet-time", page_size: int = PAGE
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """``/v0/markets`` newest-first by ``sort``, paging with ``before`` (the last market id seen)."""
        before: str | None = None
        while True:
            query: dict[str, str | int] = {"limit": page_size, "sort": sort, "order": "desc"}
            if before:
                query["before"] = before
            page = _objects(await self._api.get("/v0/markets", self._limiter, query), "GET /v0/markets")
            yield page
            if len(page) < page_size:
                return
            last = page[-1].get("id")
            if not isinstance(last, str) or not last or last == before:
                raise PayloadError(f"GET /v0/markets: cannot page past market id {last!r}")
            before = last

    async def market(self, market_id: str) -> dict[str, Any] | None:
        """``/v0/market/{id}`` (a FullMarket); None if Manifold says 404."""
        try:
            payload = await self._api.get(f"/v0/market/{market_id}", self._limiter)
        except VenueHTTPError as exc:
            if exc.status == 404:
                return None
            raise
        return dict(as_object(payload, where=f"GET /v0/market/{market_id}"))

    async def bets(self, market_id: str, since: datetime) -> list[dict[str, Any]]:
        """All bets on a market created after ``since``, paging back with ``before`` (a bet id)."""
        bets: list[dict[str, Any]] = []
        before: str | None = None
        while True:
            query: dict[str, str | int] = {
                "contractId": market_id,
                "limit": PAGE,
                "afterTime": int(since.timestamp() * 1000),
            }
            if before:
                query["before"] = before
            page = _objects(await self._api.get("/v0/bets", self._limiter, query), "GET /v0/bets")
            bets.extend(page)
            if len(page) < PAGE:
                return bets
            last = page[-1].get("id")
            if not isinstance(last, str) or not last or last == before:
                raise PayloadError(f"GET /v0/bets: cannot page past bet id {last!r}")
            before = last


def _objects(payload: object, where: str) -> list[dict[str, Any]]:
    items = as_list(payload, where=where)
    if not all(isinstance(item, dict) for item in items):
        raise PayloadError(f"{where}: every entry must be an object")
    return items
