"""Async clients for Polymarket's Gamma (catalog) and CLOB (order book) APIs.

They return decoded payloads and parsed prices; turning markets into rows is the caller's job.
Rate limits are 80 % of the published per-endpoint budgets (docs.polymarket.com rate-limits);
their sum stays below the Gamma and CLOB general budgets, so no extra general limiter is needed.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from markets.concurrency import gather_bounded
from markets.http import (
    JsonApi,
    PayloadError,
    VenueHTTPError,
    as_list,
    as_object,
    budget,
    decode_json,
)
from markets.listing_items import Items, read_items
from markets.polymarket import clob, gamma

log = logging.getLogger(__name__)

MARKETS_PAGE = 100  # /markets/keyset serves at most 100 per page
EVENTS_PAGE = 100  # /events/keyset allows 500, but events embed their markets: keep pages small
ID_BATCH = 100  # condition_ids= takes at most 100 ids
CLOB_BATCH = 500  # /midpoints and /books take at most 500 tokens
Query = list[tuple[str, str | int | bool]]
V = TypeVar("V")
A = TypeVar("A", bound="clob.Answers[Any]")


class Page(list[dict[str, Any]]):
    """One page of a Gamma listing. Read as a listing (``GammaClient.market_listing``), its items
    hold only ``gamma.ListingFields`` and ``sent`` holds each one's JSON as the venue sent it (a
    sync digests it to spot unchanged markets, and decodes it whole only for the others); read
    otherwise, or when the body could not be read that way, the items are whole and ``sent`` is None."""

    def __init__(self, items: list[dict[str, Any]], sent: list[bytes] | None = None) -> None:
        super().__init__(items)
        self.sent = sent


class GammaClient:
    """Gamma: market and event listings with keyset pagination, and single markets."""

    def __init__(self, api: JsonApi) -> None:
        self._api = api
        self._markets = budget(300, 10)
        self._events = budget(500, 10)

    async def market_pages(self, filters: Query) -> AsyncIterator[Page]:
        """Every page of ``/markets/keyset`` for ``filters``, following ``after_cursor`` to the end."""
        async for page in self._keyset("/markets/keyset", "markets", filters, MARKETS_PAGE):
            yield page

    async def market_listing(self, filters: Query) -> AsyncIterator[Page]:
        """``market_pages``, each market read as its ``gamma.ListingFields`` and its JSON as sent."""
        async for page in self._keyset("/markets/keyset", "markets", filters, MARKETS_PAGE, listing=True):
            yield page

    async def event_pages(self, filters: Query) -> AsyncIterator[Page]:
        """Every page of ``/events/keyset`` for ``filters`` (events embed their markets)."""
        async for page in self._keyset("/events/keyset", "events", filters, EVENTS_PAGE):
            yield page

    async def markets_by_condition_ids(
        self, condition_ids: Sequence[str], *, closed: bool
    ) -> list[dict[str, Any]]:
        """Markets with these condition ids and this ``closed`` state (Gamma filters on it either way)."""
        found: list[dict[str, Any]] = []
        for start in range(0, len(condition_ids), ID_BATCH):
            batch: Query = [("condition_ids", c) for c in condition_ids[start : start + ID_BATCH]]
            async for page in self.market_pages([*batch, ("closed", closed)]):
                found.extend(page)
        return found

    async def market(self, gamma_id: str) -> dict[str, Any] | None:
        """``/markets/{id}`` (not subject to the ``closed`` filter); None if Gamma says 404."""
        return await self._api.get_object_or_none(f"/markets/{gamma_id}", self._markets)

    async def _keyset(
        self, path: str, key: str, filters: Query, limit: int, *, listing: bool = False
    ) -> AsyncIterator[Page]:
        if not any(name == "closed" for name, _ in filters):
            raise ValueError(f"{path}: pass 'closed' explicitly; Gamma's default differs per endpoint")
        limiter = self._markets if key == "markets" else self._events
        decode = partial(_listing_page, key) if listing else decode_json
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            query: Query = [*filters, ("limit", limit)] + ([("after_cursor", cursor)] if cursor else [])
            answer = await self._api.get(path, limiter, query, decode=decode)
            page, cursor = _page(answer, path, key)
            yield page
            if not cursor:  # absent, null or "" on the last page
                return
            if not isinstance(cursor, str) or cursor in seen:
                raise PayloadError(
                    f"GET {path}: next_cursor {cursor!r} is invalid or repeats; pagination stalled"
                )
            seen.add(cursor)


def _listing_page(key: str, content: bytes) -> Items | Any:
    """A listing body read as ``Items`` of ``gamma.ListingFields``, or whole when it cannot be."""
    return read_items(content, key, gamma.ListingFields) or decode_json(content)


def _page(answer: Items | Any, path: str, key: str) -> tuple[Page, Any]:
    """A keyset body's page and its ``next_cursor``, its items checked to be objects."""
    if isinstance(answer, Items):
        return Page(answer.fields, answer.sent), answer.next_cursor
    body = as_object(answer, where=f"GET {path}")
    items = as_list(body.get(key), where=f"GET {path} field {key!r}")
    if not all(isinstance(item, dict) for item in items):
        raise PayloadError(f"GET {path}: every entry of {key!r} must be an object")
    return Page(items), body.get("next_cursor")


class ClobClient:
    """CLOB market data: midpoints, order books and price history, batched where the API allows."""

    def __init__(self, api: JsonApi, *, concurrency: int = 4) -> None:
        self._api = api
        self._concurrency = concurrency
        self._midpoint, self._midpoints = budget(1500, 10), budget(500, 10)
        self._book, self._books = budget(1500, 10), budget(500, 10)
        self._history = budget(1000, 10)

    async def midpoint(self, token_id: str) -> clob.TokenPrice:
        """One token's mid, or why there is none (a 404 means the token has no order book)."""
        try:
            return clob.midpoint(
                await self._api.get("/midpoint", self._midpoint, {"token_id": token_id}), token_id
            )
        except (VenueHTTPError, PayloadError) as exc:
            return str(exc)

    async def midpoints(self, token_ids: Sequence[str]) -> clob.Answers[clob.TokenPrice]:
        """Mids for many tokens via ``POST /midpoints``; a batch that fails falls back to ``/midpoint``."""
        return await self._batches(token_ids, self._midpoint_batch, clob.Mids)

    async def _midpoint_batch(self, tokens: list[str]) -> clob.Answers[clob.TokenPrice]:
        try:
            payload = await self._api.post("/midpoints", self._midpoints, [{"token_id": t} for t in tokens])
            return clob.midpoints(payload, tokens)
        except (VenueHTTPError, PayloadError) as exc:
            log.warning(
                "POST /midpoints failed for %d tokens (%s); falling back to GET /midpoint", len(tokens), exc
            )
        return await self._singles(tokens, self.midpoint, clob.Mids)

    async def book(self, token_id: str) -> clob.Quote | str:
        """One token's best bid and ask, or why there is none."""
        try:
            return clob.best_quote(await self._api.get("/book", self._book, {"token_id": token_id}), token_id)
        except (VenueHTTPError, PayloadError) as exc:
            return str(exc)

    async def books(self, token_ids: Sequence[str]) -> clob.Answers[clob.Quote | str]:
        """Best quotes for many tokens via ``POST /books``; a batch that fails falls back to ``/book``."""
        return await self._batches(token_ids, self._book_batch, clob.Books)

    async def _book_batch(self, tokens: list[str]) -> clob.Answers[clob.Quote | str]:
        try:
            body = [{"token_id": t} for t in tokens]
            payload = await self._api.post("/books", self._books, body, decode=clob.decode_books)
            return clob.books(payload, tokens)
        except (VenueHTTPError, PayloadError) as exc:
            log.warning("POST /books failed for %d tokens (%s); falling back to GET /book", len(tokens), exc)
        return await self._singles(tokens, self.book, clob.Books)

    async def _batches(
        self, token_ids: Sequence[str], batch: Callable[[list[str]], Awaitable[A]], kind: type[A]
    ) -> A:
        """``batch`` over slices of ``CLOB_BATCH`` tokens, ``concurrency`` at a time, merged."""
        slices = [list(token_ids[i : i + CLOB_BATCH]) for i in range(0, len(token_ids), CLOB_BATCH)]
        parts = await gather_bounded([partial(batch, s) for s in slices], self._concurrency)
        merged = parts[0] if parts else kind()
        for part in parts[1:]:
            merged.update_from(part)
        return merged

    async def _singles(self, tokens: list[str], one: Callable[[str], Awaitable[V]], kind: type[A]) -> A:
        """The fallback of a failed batch: each token on its own, its answer parsed as it arrives."""
        values = await gather_bounded([partial(one, t) for t in tokens], self._concurrency * 4)
        return kind(known=dict(zip(tokens, values, strict=True)))

    def prices_as_listed(self, group: TaskGroup, *, books: bool) -> TokenPrices:
        """Midpoints (and books) of tokens handed over while a listing is still being read."""
        return TokenPrices(self, group, books=books, concurrency=self._concurrency)

    async def price_history(
        self, token_id: str, start: datetime, end: datetime, fidelity_minutes: int
    ) -> list[tuple[datetime, Decimal]]:
        """``/prices-history`` for one **token id** (not a condition id) between two times."""
        query = {
            "market": token_id,
            "startTs": int(start.timestamp()),
            "endTs": int(end.timestamp()),
            "fidelity": fidelity_minutes,
        }
        payload = await self._api.get("/prices-history", self._history, query)
        return clob.price_history(payload, token_id, fidelity_minutes)


class TokenPrices:
    """CLOB midpoints, and books if asked, of tokens handed over as a listing is read: every
    ``CLOB_BATCH`` tokens start their ``/midpoints`` and ``/books`` requests in the caller's task
    group, so the first markets of a listing are priced while Gamma serves its next pages (Gamma
    pages follow a cursor, one after another; alone they leave the CLOB idle, and the CLOB
    requests alone leave Gamma idle). At most ``concurrency`` batches are in flight; the rate
    limiters pace them as before. The results are complete once the task group has exited.
    """

    def __init__(self, client: ClobClient, group: TaskGroup, *, books: bool, concurrency: int) -> None:
        self.mids, self.quotes = clob.Mids(), clob.Books()
        self.requested = 0
        self._client, self._group, self._books = client, group, books
        self._slots = anyio.Semaphore(max(1, concurrency))
        self._waiting: list[str] = []

    def add(self, tokens: Sequence[str]) -> None:
        """Tokens to price; a full batch is requested at once."""
        self._waiting.extend(tokens)
        while len(self._waiting) >= CLOB_BATCH:
            self._start(self._waiting[:CLOB_BATCH])
            del self._waiting[:CLOB_BATCH]

    def flush(self) -> None:
        """Request the tokens of a last, partial batch (nothing more will be added)."""
        if self._waiting:
            self._start(self._waiting)
            self._waiting = []

    def _start(self, batch: list[str]) -> None:
        self.requested += len(batch)
        self._group.start_soon(self._batch, batch, self._client.midpoints, self.mids)
        if self._books:
            self._group.start_soon(self._batch, batch, self._client.books, self.quotes)

    async def _batch(
        self,
        batch: list[str],
        request: Callable[[Sequence[str]], Awaitable[clob.Answers[V]]],
        into: clob.Answers[V],
    ) -> None:
        async with self._slots:
            into.update_from(await request(batch))
