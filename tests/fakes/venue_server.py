"""Base of the fake venues: a real HTTP/1.1 server on loopback, in a thread, with scriptable faults.

Stdlib only (``ThreadingHTTPServer``), so the fakes need nothing beyond Python. Each request is
logged (``seen``) for assertions. Faults are queued per path and consumed one per request:
an error status (with ``Retry-After``), a delay (to trip client timeouts), or a raw body (to
send malformed JSON). A subclass implements ``route`` and returns ``(status, JSON value)``.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections import defaultdict, deque
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from tests.fakes.standalone import ADMIN


@dataclass(frozen=True, slots=True)
class Fault:
    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    body: bytes | None = None


@dataclass(frozen=True, slots=True)
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


class FakeVenue(ABC):
    """Start with ``with FakeX() as venue:``; ``venue.url`` is its base URL."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.lock = threading.RLock()
        self.seen: list[Seen] = []
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._server: ThreadingHTTPServer | None = None

    @abstractmethod
    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        """The venue's answer to one request: HTTP status and a JSON value."""

    def fail(self, path: str, fault: Fault, times: int = 1) -> None:
        """The next ``times`` requests to ``path`` get ``fault`` instead of (or before) the answer."""
        with self.lock:
            self._faults[path].extend([fault] * times)

    def requests_to(self, path: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.path == path]

    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        handler = _handler_for(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        serve = partial(self._server.serve_forever, poll_interval=0.02)  # quick shutdown between tests
        threading.Thread(target=serve, name=type(self).__name__, daemon=True).start()
        return self

    def __exit__(
        self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]
    ) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def admin(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """The admin API (``tests.fakes.standalone``): none unless a venue has one."""
        return 404, {"error": f"no admin API on {type(self).__name__}"}

    def respond(self, method: str, target: str, raw_body: bytes) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(target)
        try:
            body = json.loads(raw_body) if raw_body else None
        except ValueError:
            return 400, {}, json.dumps({"error": "the body is not JSON"}).encode()
        if parts.path.startswith(ADMIN):
            status, answer = self.admin(method, parts.path, body)
            return status, {}, json.dumps(answer).encode()
        query = parse_qs(parts.query, keep_blank_values=True)
        with self.lock:
            self.seen.append(Seen(method, parts.path, query, body))
            queue = self._faults.get(parts.path)
            fault = queue.popleft() if queue else None
        if fault is not None:
            time.sleep(fault.delay)
            if fault.status is not None:
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                return fault.status, headers, json.dumps({"error": f"injected HTTP {fault.status}"}).encode()
            if fault.body is not None:
                return 200, {}, fault.body
        status, payload = self.route(method, parts.path, query, body)
        return status, {}, json.dumps(payload).encode()


def _handler_for(venue: FakeVenue) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the real APIs (and httpx pools) expect

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            status, headers, body = venue.respond(method, self.path, self.rfile.read(length))
            send_json(self, status, headers, body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: tests assert on ``venue.seen``

    return Handler


def send_json(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    """Write one JSON response; a client that already gave up (a timeout test) is not an error."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        pass


def flag(query: dict[str, list[str]], name: str) -> bool | None:
    """A boolean query parameter as the APIs read it (``true``/``false``), None when absent."""
    values = query.get(name)
    return None if not values else values[-1].lower() == "true"


def last(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None
