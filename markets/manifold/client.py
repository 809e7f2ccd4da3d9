"""Async client for Manifold API v0 reads: market listings, single markets and bets.

Manifold allows 500 requests per minute per IP; the client keeps to 80 % of that.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from markets.http import JsonApi, PayloadError, as_list, budget

PAGE = 1000  # the documented maximum for /v0/markets and /v0/bets


class ManifoldClient:
    def __init__(self, api: JsonApi) -> None:
        self._api = api
        self._limiter = budget(500, 60)

    async def market_pages(
        self, *, sort: str = "last-bet-time", page_size: int = PAGE
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """``/v0/markets`` newest-first by ``sort``, paging with ``before`` (the last market id seen)."""
        query: dict[str, str | int] = {"limit": page_size, "sort": sort, "order": "desc"}
        async for page in self._pages("/v0/markets", query, page_size, "market"):
            yield page

    async def market(self, market_id: str) -> dict[str, Any] | None:
        """``/v0/market/{id}`` (a FullMarket); None if Manifold says 404."""
        return await self._api.get_object_or_none(f"/v0/market/{market_id}", self._limiter)

    async def bets(self, market_id: str, since: datetime) -> list[dict[str, Any]]:
        """All bets on a market created after ``since``, paging back with ``before`` (a bet id)."""
        query: dict[str, str | int] = {
            "contractId": market_id,
            "limit": PAGE,
            "afterTime": int(since.timestamp() * 1000),
        }
        return [bet async for page in self._pages("/v0/bets", query, PAGE, "bet") for bet in page]

    async def _pages(
        self, path: str, query: dict[str, str | int], page_size: int, item: str
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Manifold's cursor paging: ask again ``before`` the last id until a page comes back short.

        A last id that is missing or repeats would loop forever on a misbehaving server: refused.
        """
        before: str | None = None
        while True:
            page = _objects(await self._api.get(path, self._limiter, {**query, **_before(before)}), path)
            yield page
            if len(page) < page_size:
                return
            last = page[-1].get("id")
            if not isinstance(last, str) or not last or last == before:
                raise PayloadError(f"GET {path}: cannot page past {item} id {last!r}")
            before = last


def _before(cursor: str | None) -> dict[str, str]:
    return {"before": cursor} if cursor else {}


def _objects(payload: object, path: str) -> list[dict[str, Any]]:
    where = f"GET {path}"
    items = as_list(payload, where=where)
    if not all(isinstance(item, dict) for item in items):
        raise PayloadError(f"{where}: every entry must be an object")
    return items
