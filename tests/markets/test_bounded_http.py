"""What a venue may send is bounded: a decompression bomb, a huge body and a trickle each end as
that request's error, with memory bounded by the limit, never by what the server sends.

Every venue request goes through ``JsonApi`` (``markets.bounded.fetch_bounded`` underneath): the
hostile servers speak real HTTP on loopback, and peak memory is read with ``tracemalloc``.
"""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from markets.bounded import kept_json, kept_text
from markets.http import JsonApi, RateLimiter, RetryPolicy, VenueHTTPError
from tests.fakes.hostile_server import Bomb, Drip, HostileServer, Huge

pytestmark = pytest.mark.anyio
LIMIT = 1024 * 1024
POLICY = RetryPolicy(
    attempts=3, base_delay=0.01, max_delay=0.02, timeout=5.0, deadline=1.5, max_body_bytes=LIMIT
)


async def peak_while(work: Callable[[], Awaitable[Any]]) -> tuple[Any, int]:
    """What ``work`` returned or raised, and the peak of Python memory while it ran (bytes)."""
    tracemalloc.start()
    try:
        try:
            result: Any = await work()
        except Exception as exc:
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def get(url: str, policy: RetryPolicy = POLICY) -> Any:
    async with httpx.AsyncClient() as client:
        return await JsonApi(client, url, policy=policy).get("/markets", RateLimiter(100, 1))


@pytest.mark.timeout(60)
async def test_a_gzip_bomb_is_cut_at_the_limit_without_inflating_it() -> None:
    with HostileServer(Bomb(inflated=256 * LIMIT)) as server:
        error, peak = await peak_while(lambda: get(server.url))
        assert isinstance(error, VenueHTTPError), error
        assert "exceeds the limit of 1,048,576 bytes" in str(error)
        assert server.requests == 1  # the same body again would be as large: not retried
    assert peak < 6 * LIMIT, f"peak {peak:,} bytes for a limit of {LIMIT:,}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("declared", [True, False])
async def test_a_huge_plain_body_is_cut_at_the_limit(declared: bool) -> None:
    with HostileServer(Huge(size=300 * LIMIT, declared=declared)) as server:
        error, peak = await peak_while(lambda: get(server.url))
        assert isinstance(error, VenueHTTPError) and "exceeds the limit" in str(error), error
        assert server.requests == 1
    assert peak < 6 * LIMIT, f"peak {peak:,} bytes"


@pytest.mark.timeout(60)
async def test_a_trickling_body_fails_each_attempt_at_its_deadline() -> None:
    with HostileServer(Drip(interval=0.2)) as server:
        started = time.monotonic()
        with pytest.raises(VenueHTTPError, match="within the 1s deadline; gave up after 2 attempts"):
            await get(server.url, RetryPolicy(attempts=2, base_delay=0.01, timeout=5.0, deadline=1.0))
        elapsed = time.monotonic() - started
        assert server.requests == 2
    # each read came within the 5 s read timeout: only the deadline could end it
    assert elapsed < 4.0


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
async def test_compressed_bodies_within_the_limit_decode_as_before(encoding: str) -> None:
    payload = [{"id": i, "question": "Will it rain?" * 20} for i in range(500)]
    plain = json.dumps(payload).encode()
    if encoding == "gzip":
        body = gzip.compress(plain)
    elif encoding == "deflate":
        body = zlib.compress(plain)
    else:
        squeeze = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = squeeze.compress(plain) + squeeze.flush()

    def venue(request: httpx.Request) -> httpx.Response:
        name = "deflate" if encoding == "raw-deflate" else encoding
        return httpx.Response(200, content=body, headers={"Content-Encoding": name})

    async with httpx.AsyncClient(transport=httpx.MockTransport(venue)) as client:
        api = JsonApi(client, "https://venue.example", policy=POLICY)
        assert await api.get("/markets", RateLimiter(100, 1)) == payload


async def test_a_content_coding_not_asked_for_is_refused() -> None:
    async def streamed() -> AsyncIterator[bytes]:
        yield b"\x1b\x00"

    def venue(request: httpx.Request) -> httpx.Response:
        assert request.headers["accept-encoding"] == "gzip, deflate"
        return httpx.Response(200, content=streamed(), headers={"Content-Encoding": "br"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(venue)) as client:
        api = JsonApi(client, "https://venue.example", policy=POLICY)
        with pytest.raises(VenueHTTPError, match="unreadable body: content coding 'br' was not asked for"):
            await api.get("/markets", RateLimiter(100, 1))


def test_a_text_past_its_limit_is_kept_as_its_size_and_sha256() -> None:
    assert kept_text("short", 10) == "short"
    note = kept_text("x" * 300, 100)
    assert note.startswith("[not kept: 300 characters (300 bytes) exceed the limit of 100; sha256 ")
    assert len(note) < 200 and "xxxxxxxx" not in note


def test_a_payload_past_its_limit_is_kept_as_a_note_with_its_id() -> None:
    small = {"id": "m1", "question": "Q?"}
    assert kept_json(small, 1000) is small
    note = kept_json({"id": "m1", "description": "d" * 5000}, 1000)
    assert note["not_kept"] == "payload of 5,028 bytes exceeds the limit of 1,000"
    assert (note["bytes"], note["id"], len(note["sha256"])) == (5028, "m1", 64)
    assert kept_json(None, 10) is None
