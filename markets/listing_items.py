"""Reading a listing page's items as the venue sent them, with only the fields a caller names decoded.

A sync lists every open market on each run and finds most of them unchanged: it digests each
item's JSON as sent and compares that with the stamp stored at its last sync. Decoding every
item whole for that (``json.loads``) was most of a no-change re-sync's own work. msgspec reads a
page twice in a fraction of the time: once keeping each item's bytes (``msgspec.Raw``), once
keeping only the fields the caller names (a ``TypedDict``, values as JSON decodes them). An item
is decoded whole (``markets.http.decode_json``, as any other body) only when a caller needs it.

A body msgspec cannot read that way (not UTF-8, a NaN, an item that is not an object, no such
array) gives None: the caller then decodes it whole, as before, and names what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import msgspec


@dataclass(frozen=True, slots=True)
class Items:
    """The items of a page's array: their named fields, their JSON as sent, and the page's cursor."""

    fields: list[dict[str, Any]]
    sent: list[bytes]
    next_cursor: Any  # None when the body has none


def read_items(content: bytes, key: str, fields: type) -> Items | None:
    """The items of the array ``key`` of the JSON object ``content`` (a keyset page: ``key`` and
    ``next_cursor``), each as its ``fields`` and its bytes; None when it is not such a body."""
    as_sent, named = _decoders(key, fields)
    try:
        body = as_sent.decode(content)
        chosen = named.decode(content)
    except msgspec.MsgspecError:
        return None
    return Items(getattr(chosen, key), [bytes(item) for item in getattr(body, key)], body.next_cursor)


@cache
def _decoders(key: str, fields: type) -> tuple[msgspec.json.Decoder[Any], msgspec.json.Decoder[Any]]:
    """Decoders of a page whose array ``key`` holds objects: as sent, and as ``fields``."""
    as_sent = msgspec.defstruct("AsSent", [(key, list[msgspec.Raw]), ("next_cursor", Any, None)])
    named = msgspec.defstruct("Named", [(key, list[fields])])  # type: ignore[valid-type]
    return msgspec.json.Decoder(as_sent), msgspec.json.Decoder(named)
