"""Decoding a JSON object while keeping the source text of each item of one of its arrays.

A sync digests every market payload it lists, to tell an unchanged market from a changed one
before parsing it. Encoding each decoded payload back to JSON for that costs about as much as
decoding it did; the text the venue sent is already at hand. ``object_with_item_texts`` decodes
a body exactly as ``json.loads`` does (the same C scanner reads every value) and also returns,
for each item of the array under ``key``, the slice of the body it was read from. A body shaped
any other way is decoded by the caller's fallback and gets no texts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's insignificant whitespace, as ``json.decoder`` skips it


def object_with_item_texts(
    text: str, key: str, decoder: json.JSONDecoder
) -> tuple[dict[str, Any], list[str]] | None:
    """``text`` decoded as a JSON object, and the source text of each item of its array ``key``;
    None when it is not an object holding such an array, or not valid JSON (the caller's plain
    decode then says why)."""
    scan: Callable[[str, int], tuple[Any, int]] = decoder.scan_once  # type: ignore[attr-defined]
    body: dict[str, Any] = {}
    texts: list[str] | None = None
    try:
        at = _skip(text, 0)
        if text[at] != "{":
            return None
        at = _skip(text, at + 1)
        while text[at] != "}":
            name, at = scan(text, at)
            at = _skip(text, at)
            if not isinstance(name, str) or text[at] != ":":
                return None
            at = _skip(text, at + 1)
            if name == key and text[at] == "[":
                body[name], texts, at = _array(text, at, scan)
            else:
                body[name], at = scan(text, at)
            at = _skip(text, at)
            if text[at] == ",":
                at = _skip(text, at + 1)
                if text[at] == "}":
                    return None  # a trailing comma: not JSON
            elif text[at] != "}":
                return None
        if _skip(text, at + 1) != len(text) or texts is None:
            return None
    except (ValueError, IndexError, StopIteration):
        return None
    return body, texts


def _array(
    text: str, at: int, scan: Callable[[str, int], tuple[Any, int]]
) -> tuple[list[Any], list[str], int]:
    """The array starting at ``text[at]`` (a ``[``): its items, their texts, and where it ends."""
    items: list[Any] = []
    texts: list[str] = []
    # json.loads reads a body in one call, so equal keys of its objects are one string object; a
    # call per item would give every item its own copies (1.8 KB a Gamma market): share them.
    keys: dict[str, str] = {}
    at = _skip(text, at + 1)
    if text[at] == "]":
        return items, texts, at + 1
    while True:
        item, end = scan(text, at)
        if isinstance(item, dict):
            item = {keys.setdefault(name, name): value for name, value in item.items()}
        items.append(item)
        texts.append(text[at:end])
        at = _skip(text, end)
        if text[at] == "]":
            return items, texts, at + 1
        if text[at] != ",":
            raise ValueError("expected ',' or ']'")
        at = _skip(text, at + 1)


def _skip(text: str, at: int) -> int:
    """Where the first character at or after ``at`` that is not whitespace is (venues send
    compact JSON: most calls find none)."""
    if at < len(text) and text[at] not in " \t\n\r":
        return at
    found = _WHITESPACE.match(text, at)
    return found.end() if found else at
