"""Bounded HTTP reads, and bounded copies of what came back: shared by every venue and LLM client.

``fetch_bounded`` sends a request and reads its body within a size limit and an overall
deadline. The body is read as it streams and decompressed here, chunk by chunk, never more than
the room left under the limit at a time: a gzip body inflating to gigabytes is cut at the limit
having held at most the limit (plus a network chunk) in memory, and a server sending one byte a
second is cut at the deadline, which bounds the whole exchange (connect, headers, body) where
httpx's own timeouts bound each read. Only ``gzip`` and ``deflate`` are asked for and decoded;
any other content coding is refused, since it could not be bounded.

``kept_text`` and ``kept_json`` are what a store keeps of a raw body or payload: the value
itself up to a limit, and past it a short note of its size and sha256 instead (never a prefix,
which would read as the whole thing).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import msgspec

ACCEPT_ENCODING = "gzip, deflate"  # what ``_Decoder`` can inflate within a limit
_GZIP_WBITS, _ZLIB_WBITS, _RAW_WBITS = 16 + zlib.MAX_WBITS, zlib.MAX_WBITS, -zlib.MAX_WBITS
NOT_KEPT = "not_kept"  # the key of the note a too-large JSON payload is stored as


class BodyTooLarge(Exception):
    """A response body that exceeds its limit once decoded; it was not read further."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body exceeds the limit of {limit:,} bytes (decoded)")
        self.limit = limit


class UnreadableBody(Exception):
    """A body that cannot be decoded: corrupt compression, or a content coding not asked for."""


@dataclass(frozen=True, slots=True)
class BoundedResponse:
    """A response read whole within its limits: status, headers and the decoded body."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        """The body as UTF-8 (what JSON APIs send); undecodable bytes become U+FFFD."""
        return self.content.decode("utf-8", errors="replace")


async def fetch_bounded(
    client: httpx.AsyncClient, request: httpx.Request, *, max_bytes: int, deadline_s: float
) -> BoundedResponse:
    """Send ``request`` and read its decoded body, at most ``max_bytes`` of it within ``deadline_s``.

    Raises ``BodyTooLarge``, ``UnreadableBody``, ``TimeoutError`` (the deadline passed) or what
    httpx raises for the transport. The connection is closed when the body is cut.
    """
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING
    with anyio.fail_after(deadline_s):
        response = await client.send(request, stream=True)
        try:
            content = await _read_body(response, max_bytes)
        finally:
            await response.aclose()
    return BoundedResponse(response.status_code, response.headers, content)


async def _read_body(response: httpx.Response, max_bytes: int) -> bytes:
    if response.is_stream_consumed:  # built in memory (a mock transport): only its size to check
        if len(response.content) > max_bytes:
            raise BodyTooLarge(max_bytes)
        return response.content
    declared = response.headers.get("content-length", "")
    decoder = _Decoder.for_encoding(response.headers.get("content-encoding", ""))
    if decoder is None and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge(max_bytes)  # said so up front: not one byte of it is read
    parts: list[bytes] = []
    size = 0
    async for raw in response.aiter_raw():
        chunk = raw if decoder is None else decoder.inflate(raw, max_bytes - size)
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(max_bytes)
        parts.append(chunk)
    if decoder is not None:
        tail = decoder.finish()
        if size + len(tail) > max_bytes:
            raise BodyTooLarge(max_bytes)
        parts.append(tail)
    return b"".join(parts)


class _Decoder:
    """Inflates one gzip or deflate stream, never more than the room it is given (plus one byte,
    which is how the caller learns the limit was passed)."""

    def __init__(self, wbits: int, *, deflate: bool = False) -> None:
        self._inflater = zlib.decompressobj(wbits)
        self._deflate = deflate  # "deflate" is zlib-wrapped by the standard, raw by some servers
        self._started = False

    @classmethod
    def for_encoding(cls, header: str) -> _Decoder | None:
        """The decoder for a ``Content-Encoding`` header; None for none (or ``identity``)."""
        codings = [c.strip().lower() for c in header.split(",") if c.strip().lower() not in ("", "identity")]
        if not codings:
            return None
        if codings in (["gzip"], ["x-gzip"]):
            return cls(_GZIP_WBITS)
        if codings == ["deflate"]:
            return cls(_ZLIB_WBITS, deflate=True)
        raise UnreadableBody(f"content coding {header!r} was not asked for (only {ACCEPT_ENCODING})")

    def inflate(self, data: bytes, room: int) -> bytes:
        try:
            if self._deflate and not self._started and data:
                self._started = True
                if data[0] & 0x0F != 8:  # not a zlib header: a raw deflate stream
                    self._inflater = zlib.decompressobj(_RAW_WBITS)
            out = [self._inflater.decompress(data, max(room, 0) + 1)]
            size = len(out[0])
            while self._inflater.unconsumed_tail and size <= room:
                out.append(self._inflater.decompress(self._inflater.unconsumed_tail, room - size + 1))
                size += len(out[-1])
        except zlib.error as exc:
            raise UnreadableBody(f"the body's compression is corrupt ({exc})") from None
        return b"".join(out)

    def finish(self) -> bytes:
        try:
            return self._inflater.flush()
        except zlib.error as exc:
            raise UnreadableBody(f"the body's compression is corrupt ({exc})") from None


def kept_text(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters; else a one-line note of its size and sha256."""
    if len(text) <= limit:
        return text
    data = text.encode("utf-8", errors="surrogatepass")
    return (
        f"[not kept: {len(text):,} characters ({len(data):,} bytes) exceed the limit of {limit:,}; "
        f"sha256 {hashlib.sha256(data).hexdigest()}]"
    )


def kept_json(value: Any, limit: int) -> Any:
    """A JSON payload if its encoding has at most ``limit`` bytes; else a note of its size and
    sha256 (``{"not_kept": ...}``), keeping the payload's ``id`` when it has a short one."""
    if value is None:
        return None
    try:
        data = msgspec.json.encode(value)  # what a sync writes by the thousand: the fast encoder
    except (TypeError, ValueError, OverflowError):  # a lone surrogate, a huge int: the careful one
        data = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return value
    note: dict[str, Any] = {
        NOT_KEPT: f"payload of {len(data):,} bytes exceeds the limit of {limit:,}",
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    identity = value.get("id") if isinstance(value, dict) else None
    if isinstance(identity, str) and len(identity) <= 200:
        note["id"] = identity  # what a later sync looks the market up by
    return note
