"""Find the JSON objects a model wrote, wherever it put them.

Models wrap their answer in code fences (```json, ``` json, nested fences) and prose. We do not
strip fences with patterns (the peer arena's parser broke on ``` json and on braces inside
strings). A linear scanner finds balanced ``{...}`` spans, honouring JSON strings, and a real
JSON decoder decides whether a span is an object. A span that does not decode (prose such as
"{note}", or a wrapper around the answer) is scanned again inside, a few levels down.

Nothing is repaired: numbers stay exact (``Decimal``), ``NaN``/``Infinity`` come out as
``NonFinite`` markers and repeated keys are recorded, so that validation can reject them with a
precise message instead of the decoder silently choosing a value.

The work is bounded (characters scanned, spans decoded), so 100 KB of adversarial braces cost
well under a second: a model's junk must never stall the other agents of a round.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# A decision is a few KB; anything this large is junk and is refused before parsing.
MAX_RESPONSE_CHARS = 100_000
# Outermost objects returned per answer.
MAX_CANDIDATES = 20

_MAX_DEPTH = 3  # how far into spans that do not decode we look for objects
_MAX_DECODES = 200
# Characters scanned: twice the text, plus a floor that lets short answers be searched thoroughly.
_SCAN_BUDGET_FACTOR = 2
_SCAN_BUDGET_FLOOR = 50_000
_RESCANS = 8
_STRING_OPENERS = frozenset("{[,:")
_TOKEN = re.compile(r'[{}"\\]')


@dataclass(frozen=True, slots=True)
class NonFinite:
    """A ``NaN``/``Infinity``/``-Infinity`` literal: not JSON, and never a usable number."""

    literal: str


class JsonObject(dict[str, Any]):
    """A decoded JSON object that remembers keys it saw more than once."""

    duplicate_keys: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> JsonObject:
    obj = JsonObject(pairs)
    if len(obj) != len(pairs):
        counts = Counter(k for k, _ in pairs)
        obj.duplicate_keys = tuple(k for k, n in counts.items() if n > 1)
    return obj


_DECODER = json.JSONDecoder(
    parse_float=Decimal, parse_int=Decimal, parse_constant=NonFinite, object_pairs_hook=_object
)


def json_objects(text: str) -> list[JsonObject]:
    """The outermost JSON objects in ``text``, in order (at most ``MAX_CANDIDATES``).

    An object inside one that decodes is never a separate candidate; one inside a span that
    does not decode is (up to ``_MAX_DEPTH`` levels down).
    """
    search = _Search(text)
    search.collect(0, len(text), 0)
    return search.found


class _Search:
    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[JsonObject] = []
        self.scan_budget = _SCAN_BUDGET_FACTOR * len(text) + _SCAN_BUDGET_FLOOR
        self.decodes_left = _MAX_DECODES

    def collect(self, lo: int, hi: int, depth: int) -> None:
        """Decode the outermost spans of ``text[lo:hi]``; look inside the ones that fail."""
        for start, end in _outermost(self.spans(lo, hi)):
            if len(self.found) >= MAX_CANDIDATES or self.decodes_left <= 0:
                return
            self.decodes_left -= 1
            value = _decode(self.text[start : end + 1])
            if value is not None:
                self.found.append(value)
            elif depth < _MAX_DEPTH:  # its closing brace may be the inner object's (a mis-matched wrapper)
                self.collect(start + 1, end + 1, depth + 1)

    def spans(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Balanced spans in ``text[lo:hi]``, sorted by start.

        One pass, plus a fresh pass after the first brace a pass leaves unclosed (at most
        ``_RESCANS``), so a stray ``{`` in prose does not hide an answer that follows it.
        """
        spans: set[tuple[int, int]] = set()
        start: int | None = lo
        for _ in range(_RESCANS + 1):
            if start is None or self.scan_budget <= 0:
                break
            self.scan_budget -= hi - start
            found, unclosed = _scan(self.text, start, hi)
            spans.update(found)
            start = None if unclosed is None else unclosed + 1
        return sorted(spans)


def _decode(blob: str) -> JsonObject | None:
    try:
        value, end = _DECODER.raw_decode(blob)
    except (ValueError, RecursionError):
        return None
    return value if end == len(blob) and isinstance(value, JsonObject) else None


def _scan(text: str, lo: int, hi: int) -> tuple[list[tuple[int, int]], int | None]:
    """Balanced spans in ``text[lo:hi]`` and the first brace left unclosed (if any).

    A quote opens a JSON string only inside an open brace and right after ``{ [ , :`` (where
    JSON allows a string), so quotes in prose (he said "hi) do not put the scanner out of
    step; backslash escapes are honoured inside strings.
    """
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    in_string = False
    skip_at = -1
    for match in _TOKEN.finditer(text, lo, hi):
        char, at = match.group(), match.start()
        if at == skip_at:
            continue
        if in_string:
            if char == "\\":
                skip_at = at + 1
            elif char == '"':
                in_string = False
        elif char == "{":
            stack.append(at)
        elif char == "}" and stack:
            spans.append((stack.pop(), at))
        elif char == '"' and stack:
            in_string = _previous_visible(text, at, lo) in _STRING_OPENERS
    return spans, (stack[0] if stack else None)


def _previous_visible(text: str, at: int, lo: int) -> str:
    """The last non-whitespace character in ``text[lo:at]`` ('' if none)."""
    at -= 1
    while at >= lo and text[at].isspace():
        at -= 1
    return text[at] if at >= lo else ""


def _outermost(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans (sorted by start) that no other span contains."""
    result: list[tuple[int, int]] = []
    reach = -1
    for start, end in spans:
        if start > reach:
            result.append((start, end))
            reach = end
    return result
