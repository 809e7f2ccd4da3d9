"""Pure parsing of Polymarket CLOB market-data payloads (midpoints, books, price history).

The CLOB midpoint is the arena's accounting price for Polymarket (a peer arena learnt, after an
hour of corrupted Gamma catalog prices, to value positions at the CLOB mid and keep Gamma only for
comparison). All CLOB prices are decimal strings except price-history ``p``, a JSON number.
Book sides are not assumed sorted (their documented order is counter-intuitive and has changed):
the best bid is the highest bid price and the best ask the lowest ask price.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from markets.http import PayloadError, as_list, as_object, epoch_time, plain_probabilities, probability
from markets.types import Market, PriceSnapshot

CLOB_MID_SOURCE = "polymarket-clob-mid"
CLOB_HISTORY_SOURCE = "polymarket-clob-history"

# Per token: a price, or the reason there is none (kept so the sync can say why a market has no price).
TokenPrice = Decimal | str
Quote = tuple[Decimal | None, Decimal | None]


def midpoint(payload: object, token_id: str) -> Decimal:
    """``GET /midpoint``: ``{"mid": "0.435"}`` (older docs) or ``{"mid_price": "0.45"}`` (2026 docs)."""
    where = f"CLOB /midpoint token {token_id}"
    body = as_object(payload, where=where)
    key = "mid_price" if "mid_price" in body else "mid"
    return probability(body.get(key), where=where, field=key)


def midpoints(payload: object, token_ids: list[str]) -> dict[str, TokenPrice]:
    """``POST /midpoints``: ``{token_id: "0.45", …}``. A token left out or with a bad value gets a reason."""
    body = as_object(payload, where="CLOB /midpoints")
    out: dict[str, TokenPrice] = {}
    for token in token_ids:
        if token not in body:
            out[token] = "absent from the /midpoints response (no order book?)"
            continue
        try:
            out[token] = probability(body[token], where=f"CLOB /midpoints token {token}", field="mid")
        except PayloadError as exc:
            out[token] = str(exc)
    return out


def best_quote(payload: object, token_id: str) -> Quote:
    """Best bid and best ask of a ``/book`` payload; None for an empty side."""
    book = as_object(payload, where=f"CLOB /book token {token_id}")
    return _best(book, "bids", token_id, max), _best(book, "asks", token_id, min)


def books_by_token(payload: object) -> dict[str, Mapping[str, Any]]:
    """``POST /books``: an array of book payloads, keyed by their ``asset_id`` (the token id)."""
    out: dict[str, Mapping[str, Any]] = {}
    for index, item in enumerate(as_list(payload, where="CLOB /books")):
        book = as_object(item, where=f"CLOB /books[{index}]")
        token = book.get("asset_id")
        if not isinstance(token, str) or not token:
            raise PayloadError(f"CLOB /books[{index}]: field 'asset_id' must be the token id, got {token!r}")
        out[token] = book
    return out


def _best(book: Mapping[str, Any], side: str, token_id: str, pick: Any) -> Decimal | None:
    levels = book.get(side, [])
    prices = _plain_prices(levels) if isinstance(levels, list) else None
    if prices is None:  # not the usual shape: read level by level, so the error names the culprit
        where = f"CLOB /book token {token_id}"
        prices = [
            probability(
                as_object(lv, where=f"{where} {side}").get("price"), where=where, field=f"{side}.price"
            )
            for lv in as_list(levels, where=f"{where} {side}")
        ]
    return pick(prices) if prices else None


def _plain_prices(levels: list[Any]) -> list[Decimal] | None:
    """Level prices by ``plain_probabilities``; None when a level is not an object with a price."""
    try:
        return plain_probabilities([level["price"] for level in levels])
    except (TypeError, KeyError):
        return None


def price_history(payload: object, token_id: str, fidelity_minutes: int) -> list[tuple[datetime, Decimal]]:
    """``/prices-history`` points, each stamped at the *end* of its bucket, oldest first.

    Whether ``p`` is the bucket's first or last price is undocumented, so a point is only taken
    as known once its bucket is over: stamping at ``t`` could leak up to one bucket of the future.
    """
    where = f"CLOB /prices-history token {token_id}"
    history = as_list(as_object(payload, where=where).get("history"), where=f"{where} field 'history'")
    bucket = timedelta(minutes=fidelity_minutes)
    points: list[tuple[datetime, Decimal]] = []
    for index, item in enumerate(history):
        point = as_object(item, where=f"{where} history[{index}]")
        start = epoch_time(point.get("t"), where=where, field=f"history[{index}].t", millis=False)
        if start is None:
            raise PayloadError(f"{where}: history[{index}].t is missing")
        points.append((start + bucket, probability(point.get("p"), where=where, field=f"history[{index}].p")))
    return sorted(points)


def clob_snapshot(
    market: Market, mids: Mapping[str, TokenPrice], quotes: Mapping[str, Quote | str], observed_at: datetime
) -> PriceSnapshot:
    """The accounting snapshot: every outcome's CLOB midpoint, with best bid/ask where a book was read.

    All outcomes or nothing: a snapshot with one side missing would let a consumer price the
    other side from a guess.
    """
    prices: dict[str, Decimal] = {}
    for outcome in market.outcomes:
        token = market.token_ids.get(outcome)
        if token is None:
            raise PayloadError(f"{market.market_id}: no CLOB token id for outcome {outcome}")
        mid = mids.get(token, "not requested")
        if isinstance(mid, str):
            raise PayloadError(
                f"{market.market_id}: no usable CLOB midpoint for {outcome} (token {token}): {mid}"
            )
        prices[outcome] = mid
    bids, asks = {}, {}
    for outcome in market.outcomes:
        quote = quotes.get(market.token_ids[outcome])
        if isinstance(quote, tuple):
            bid, ask = quote
            if bid is not None:
                bids[outcome] = bid
            if ask is not None:
                asks[outcome] = ask
    return PriceSnapshot(market.market_id, prices, observed_at, CLOB_MID_SOURCE, bids=bids, asks=asks)
