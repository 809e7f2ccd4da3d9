"""Pure parsing of Polymarket CLOB market-data payloads (midpoints, books, price history).

The CLOB midpoint is the arena's accounting price for Polymarket (a peer arena learnt, after an
hour of corrupted Gamma catalog prices, to value positions at the CLOB mid and keep Gamma only for
comparison). All CLOB prices are decimal strings except price-history ``p``, a JSON number.
Book sides are not assumed sorted (their documented order is counter-intuitive and has changed):
the best bid is the highest bid price and the best ask the lowest ask price.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Generic, TypeVar

import msgspec

from markets.http import (
    PayloadError,
    as_list,
    as_object,
    decode_json,
    epoch_time,
    plain_probabilities,
    probability,
)
from markets.types import Market, PriceSnapshot

CLOB_MID_SOURCE = "polymarket-clob-mid"
CLOB_HISTORY_SOURCE = "polymarket-clob-history"

# Per token: a price, or the reason there is none (kept so the sync can say why a market has no price).
TokenPrice = Decimal | str
Quote = tuple[Decimal | None, Decimal | None]
V = TypeVar("V")
MID_ABSENT = "absent from the /midpoints response (no order book?)"
BOOK_ABSENT = "absent from /books response"


class Answers(Mapping[str, V], Generic[V]):
    """Per-token CLOB answers, each parsed when first read, and a ``fingerprint`` of each as sent.

    A re-sync reads the prices of 10,000 markets to find the few that changed; parsing every
    midpoint and book into decimals costs more than reading them did. The fingerprint is the
    text of what the venue sent that the parsed value depends on (a midpoint's string, the
    price of every book level in order): equal fingerprints mean equal parsed values, so a
    sync compares fingerprints and parses only the answers of markets it writes. A book whose
    sizes, timestamp or hash changed keeps its fingerprint; one whose level prices changed gets
    a new one even when its best bid and ask did not (the market then takes the full path,
    which writes nothing new).
    """

    def __init__(self, sent: dict[str, Any] | None = None, known: dict[str, V] | None = None) -> None:
        self._sent: dict[str, Any] = sent or {}  # token -> the value as sent
        # token -> a value that came parsed (a reason, an answer of the one-token fallback)
        self._known: dict[str, V] = {t: v for t, v in (known or {}).items() if t not in self._sent}
        self._parsed: dict[str, V] = {}  # token -> its sent value, parsed (read at least once)

    def update_from(self, other: Answers[V]) -> None:
        """Take ``other``'s answers (the newer, for a token in both)."""
        for token in other._sent.keys() & (self._known.keys() | self._parsed.keys()):
            self._known.pop(token, None)
            self._parsed.pop(token, None)
        for token in other._known.keys() & self._sent.keys():
            del self._sent[token]
            self._parsed.pop(token, None)
        self._sent.update(other._sent)
        self._known.update(other._known)
        self._parsed.update(other._parsed)

    def fingerprint(self, token: str) -> str | None:
        """The answer's text as sent when it has the usual shape, else its value's repr (exact
        for decimals, tuples and reasons); None when there is no answer. Reading the value first
        does not change it."""
        if token in self._sent:
            text = self._text(self._sent[token])
            if text is not None:
                return "=" + text
        return None if token not in self else "~" + repr(self[token])

    def fingerprints(self, tokens: Iterable[str]) -> str:
        """The ``fingerprint`` of each token, in one string (what a market's stamp digests)."""
        sent, text, prints = self._sent, self._text, []
        for token in tokens:  # a sync stamps every market: the usual answer without a call
            usual = text(sent[token]) if token in sent else None
            prints.append("=" + usual if usual is not None else str(self.fingerprint(token)))
        return "\t".join(prints)

    @abstractmethod
    def _parse(self, raw: Any, token: str) -> V:
        """The value of one answer as sent (or why it is not one)."""

    @abstractmethod
    def _text(self, raw: Any) -> str | None:
        """The answer's own text when it has the usual shape (what its fingerprint is), else None."""

    def __getitem__(self, token: str) -> V:
        if token in self._known:
            return self._known[token]
        if token not in self._parsed:
            self._parsed[token] = self._parse(self._sent[token], token)
        return self._parsed[token]

    def __contains__(self, token: object) -> bool:
        return token in self._sent or token in self._known

    def __iter__(self) -> Iterator[str]:
        return iter([*self._sent, *self._known])

    def __len__(self) -> int:
        return len(self._sent) + len(self._known)


def midpoint(payload: object, token_id: str) -> Decimal:
    """``GET /midpoint``: ``{"mid": "0.435"}`` (older docs) or ``{"mid_price": "0.45"}`` (2026 docs)."""
    where = f"CLOB /midpoint token {token_id}"
    body = as_object(payload, where=where)
    key = "mid_price" if "mid_price" in body else "mid"
    return probability(body.get(key), where=where, field=key)


class Mids(Answers[TokenPrice]):
    """``POST /midpoints`` answers: a midpoint's string, parsed into a decimal (or why it is not one)."""

    def _parse(self, raw: Any, token: str) -> TokenPrice:
        try:
            return probability(raw, where=f"CLOB /midpoints token {token}", field="mid")
        except PayloadError as exc:
            return str(exc)

    def _text(self, raw: Any) -> str | None:
        return raw if type(raw) is str else None


class Books(Answers[Quote | str]):
    """``POST /books`` answers: a book, parsed into its best bid and ask (or the reason it cannot be).

    A book of the usual shape is kept as the prices of its levels alone (two tuples, of strings):
    a sync holds the books of every token until it knows which markets changed, and 20,000 books
    of dicts and lists would be that many more objects for the garbage collector to walk.
    """

    def _parse(self, raw: Any, token: str) -> Quote | str:
        if type(raw) is tuple:
            bids, asks = raw
            raw = {"bids": [{"price": p} for p in bids], "asks": [{"price": p} for p in asks]}
        try:
            return best_quote(raw, token)
        except PayloadError as exc:
            return str(exc)

    def _text(self, raw: Any) -> str | None:
        """Every level price of both sides, in order, when each is a string."""
        if type(raw) is not tuple:
            return None
        bids, asks = raw
        try:
            return f"{len(bids)}:" + "|".join(bids + asks)
        except TypeError:  # a price that is not a string: the parsed value decides
            return None


def midpoints(payload: object, token_ids: list[str]) -> Mids:
    """``POST /midpoints``: ``{token_id: "0.45", …}``, parsed on first read; a token left out gets
    a reason."""
    body = as_object(payload, where="CLOB /midpoints")
    sent = {token: body[token] for token in token_ids if token in body}
    return Mids(sent, {token: MID_ABSENT for token in token_ids if token not in sent})


def books(payload: object, token_ids: list[str]) -> Books:
    """``POST /books``: best bid and ask per token, parsed on first read; a token left out gets a reason."""
    if isinstance(payload, LevelPrices):
        sent: dict[str, Any] = {token: payload[token] for token in token_ids if token in payload}
    else:
        found = books_by_token(payload)
        sent = {token: _level_prices(found[token]) for token in token_ids if token in found}
    return Books(sent, {token: BOOK_ABSENT for token in token_ids if token not in sent})


class LevelPrices(dict[str, tuple[tuple[str, ...], tuple[str, ...]]]):
    """A ``POST /books`` body of the usual shape, read straight to each token's level prices."""


class _Level(msgspec.Struct):
    price: str


class _Book(msgspec.Struct):
    asset_id: str
    bids: list[_Level]
    asks: list[_Level]


_BOOKS = msgspec.json.Decoder(list[_Book])


def decode_books(content: bytes) -> LevelPrices | Any:
    """A ``POST /books`` body: books of the usual shape (a token id, levels with string prices)
    read straight to their level prices, all a sync keeps of them, without a dict per level
    (20,000 books a sync); any other body as ``decode_json`` reads it, for ``books`` to check
    and name what is wrong."""
    try:
        found = _BOOKS.decode(content)
    except msgspec.MsgspecError:
        return decode_json(content)
    if not all(book.asset_id for book in found):
        return decode_json(content)
    return LevelPrices(
        {
            book.asset_id: (tuple([lv.price for lv in book.bids]), tuple([lv.price for lv in book.asks]))
            for book in found
        }
    )


def _level_prices(book: Mapping[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]] | Mapping[str, Any]:
    """The prices of a book's bid and ask levels, in order, when every level is an object with a
    price; the book itself otherwise (``best_quote`` then says what is wrong with it)."""
    try:
        return tuple([level["price"] for level in book["bids"]]), tuple(
            [level["price"] for level in book["asks"]]
        )
    except (TypeError, KeyError):
        return book


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
