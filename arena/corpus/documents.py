"""The corpus file format: one JSON document per line, each with a publish time that states its zone.

A document's publish time decides what a bettor may see (``search_news`` returns only documents
published before the round minus the news lag), so a missing or zoneless time is refused, never
guessed: a guessed zone would shift what counts as known by hours.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from markets.replay.format import OutsideSpan, format_utc, parse_utc

REQUIRED_FIELDS = ("id", "published_at", "title", "text")
MAX_DOCUMENT_BYTES = 256 * 1024
"""A document's title and text together, in UTF-8: PostgreSQL's search index of one document
(a ``tsvector``) holds at most 1 MB, which text of many short distinct words can reach at under
half a megabyte. Longer texts are refused, with the line: split them."""
MAX_ID_CHARS = 256
OPTIONAL_FIELDS = ("url", "source")


class CorpusError(ValueError):
    """A corpus file or corpus that cannot be used, with the line and document at fault."""


@dataclass(frozen=True, slots=True)
class Document:
    """A validated document; ``published_at`` is aware UTC."""

    id: str
    published_at: datetime
    title: str
    text: str
    url: str | None = None
    source: str | None = None

    def to_json(self) -> str:
        """The document as one line of a corpus file (the inverse of ``parse_document``)."""
        payload: dict[str, Any] = {
            "id": self.id,
            "published_at": format_utc(self.published_at),
            "title": self.title,
            "text": self.text,
        }
        payload.update({k: v for k, v in (("url", self.url), ("source", self.source)) if v is not None})
        return json.dumps(payload, ensure_ascii=False)


def read_documents(stream: IO[bytes], label: str) -> Iterator[tuple[int, Document]]:
    """(line number, document) for every non-blank line; the first bad line raises ``CorpusError``
    naming ``label``, the line and the document's id. Duplicate ids are refused too."""
    first_line: dict[str, int] = {}
    for number, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        document = parse_document(raw, f"{label} line {number}")
        seen = first_line.setdefault(document.id, number)
        if seen != number:
            raise CorpusError(
                f"{label} line {number} (id {document.id!r}): duplicate id (first on line {seen})"
            )
        yield number, document


def parse_document(raw: bytes | str, where: str) -> Document:
    """One line of a corpus file as a ``Document``; ``where`` prefixes the error."""
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{where}: not a JSON document ({exc})") from exc
    except RecursionError as exc:  # [[[[...]]]] nested deeper than Python's stack
        raise CorpusError(f"{where}: not a corpus document (JSON nested too deeply)") from exc
    if not isinstance(payload, dict):
        raise CorpusError(f"{where}: expected a JSON object, got {type(payload).__name__}")
    doc_id = payload.get("id")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise CorpusError(f"{where}: 'id' must be a non-empty string or an integer")
    if len(doc_id) > MAX_ID_CHARS:
        raise CorpusError(f"{where}: 'id' is longer than {MAX_ID_CHARS} characters")
    where = f"{where} (id {_storable(doc_id, 'id', where)!r})"
    title, text = (_text(payload, field, where) for field in ("title", "text"))
    if not (title.strip() or text.strip()):
        raise CorpusError(f"{where}: 'title' and 'text' are both empty")
    size = len(title.encode("utf-8")) + len(text.encode("utf-8"))
    if size > MAX_DOCUMENT_BYTES:
        raise CorpusError(
            f"{where}: 'title' and 'text' hold {size:,} bytes of UTF-8, more than the "
            f"{MAX_DOCUMENT_BYTES:,} a document may have (split it)"
        )
    url, source = (_optional_text(payload, field, where) for field in OPTIONAL_FIELDS)
    return Document(doc_id, _published_at(payload, where), title, text, url, source)


def _storable(value: str, field: str, where: str) -> str:
    """``value`` if both databases can store it as text: no NUL (PostgreSQL's text cannot hold
    one) and no lone surrogate (a ``\\ud800`` escape without its pair is not text)."""
    if "\x00" in value:
        raise CorpusError(f"{where}: '{field}' holds a NUL character, which a database text cannot store")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        surrogate = f"\\u{ord(value[exc.start]):04x}"
        raise CorpusError(
            f"{where}: '{field}' holds a lone surrogate ({surrogate}), which is not text"
        ) from exc
    return value


def _published_at(payload: dict[str, Any], where: str) -> datetime:
    value = payload.get("published_at")
    if not isinstance(value, str):
        raise CorpusError(f"{where}: 'published_at' is missing (need an ISO 8601 time with a zone)")
    try:
        return parse_utc(_storable(value, "published_at", where))
    except OutsideSpan as exc:
        raise CorpusError(f"{where}: 'published_at' {value!r} is {exc}") from exc
    except ValueError as exc:
        raise CorpusError(
            f"{where}: 'published_at' {value!r} is not an ISO 8601 time with a zone ({exc}); "
            "a publish time without a zone is refused, never guessed"
        ) from exc


def _text(payload: dict[str, Any], field: str, where: str) -> str:
    value = payload.get(field)
    if not isinstance(value, str):
        raise CorpusError(f"{where}: '{field}' must be a string")
    return _storable(value, field, where)


def _optional_text(payload: dict[str, Any], field: str, where: str) -> str | None:
    value = payload.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise CorpusError(f"{where}: '{field}' must be a string or null")
    return _storable(value, field, where)
