"""A hostile HTTP server on loopback: every request, whatever its path, gets the same abuse.

- ``Bomb(inflated)``: 200 with ``Content-Encoding: gzip``, a body that inflates to ``inflated``
  bytes, compressed as it is sent (a few KB on the wire per GiB inflated);
- ``Huge(size, declared=True)``: 200 with ``size`` bytes of plain body, its length declared or
  not (then the body ends when the connection closes);
- ``Drip(interval)``: 200 declaring a body it then sends one byte every ``interval`` seconds;
- ``Payload(body)``: 200 with ``body``, as large as a limit allows (for benchmarks to measure).

A real HTTP/1.1 server (stdlib ``ThreadingHTTPServer``), so clients read the body off a socket
as they would from a venue or a provider. ``sent`` counts the body bytes written before the
client went away, ``requests`` the requests answered. Stops sending when ``stop()`` is called.
"""

from __future__ import annotations

import contextlib
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

_BLOCK = 1024 * 1024


@dataclass(frozen=True)
class Bomb:
    inflated: int


@dataclass(frozen=True)
class Huge:
    size: int
    declared: bool = True


@dataclass(frozen=True)
class Drip:
    interval: float = 1.0
    length: int = 10_000


@dataclass(frozen=True)
class Payload:
    body: bytes


Abuse = Bomb | Huge | Drip | Payload


class HostileServer:
    """``with HostileServer(Bomb(2**30)) as server:``; ``server.url`` is its base URL."""

    def __init__(self, abuse: Abuse) -> None:
        self.abuse = abuse
        self.sent = 0
        self.requests = 0
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def count(self, sent: int) -> None:
        with self.lock:
            self.sent += sent

    def __enter__(self) -> Self:
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()


def _handler(owner: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            with owner.lock:
                owner.requests += 1
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client cut the body
                _abuse(self, owner)

        do_POST = do_GET

        def log_message(self, *args: Any) -> None:
            return

    return Handler


def _abuse(handler: BaseHTTPRequestHandler, owner: HostileServer) -> None:
    abuse = owner.abuse

    def write(data: bytes) -> None:
        handler.wfile.write(data)
        handler.wfile.flush()
        owner.count(len(data))

    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    if isinstance(abuse, Drip):
        handler.send_header("Content-Length", str(abuse.length))
        handler.end_headers()
        _drip(abuse, owner, write)
        return
    if isinstance(abuse, Payload):
        handler.send_header("Content-Length", str(len(abuse.body)))
        handler.end_headers()
        write(abuse.body)
        return
    handler.send_header("Connection", "close")  # the body may end when the connection does
    if isinstance(abuse, Bomb):
        handler.send_header("Content-Encoding", "gzip")
        handler.end_headers()
        _bomb(abuse.inflated, owner, write)
    else:
        if abuse.declared:
            handler.send_header("Content-Length", str(abuse.size))
        handler.end_headers()
        _plain(abuse.size, owner, write)


def _bomb(inflated: int, owner: HostileServer, write: Callable[[bytes], None]) -> None:
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
    block = b"0" * _BLOCK
    for _ in range(inflated // _BLOCK):
        if owner.stopping.is_set():
            return
        if out := deflate.compress(block):
            write(out)
    write(deflate.flush())


def _plain(size: int, owner: HostileServer, write: Callable[[bytes], None]) -> None:
    block = b"1" * 65_536
    left = size
    while left > 0 and not owner.stopping.is_set():
        write(block[: min(left, len(block))])
        left -= len(block)


def _drip(drip: Drip, owner: HostileServer, write: Callable[[bytes], None]) -> None:
    for _ in range(drip.length):
        if owner.stopping.wait(drip.interval):
            return
        write(b" ")
