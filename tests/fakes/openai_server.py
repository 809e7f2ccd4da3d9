"""A scriptable OpenAI-compatible chat-completions server on loopback (real HTTP, one thread per request).

Tests queue ``Reply`` objects (one per request, in order) or install a ``responder`` that
builds a reply from the request; each reply can be delayed, fail with an OpenAI/OpenRouter
style error body, carry ``Retry-After``, come back empty or cut at the token limit. Every
request is recorded (headers, JSON body, arrival time) for assertions.

Thread-per-request (``ThreadingHTTPServer``) with a deep listen backlog, so 100 concurrent
requests that each sleep 1 s are answered together in about 1 s.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.venue_server import send_json


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any
    received_at: float  # time.perf_counter()


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``body`` (if set) is sent verbatim instead of a built completion."""

    status: int = 200
    content: str | None = ""
    finish_reason: str | None = "stop"
    prompt_tokens: int = 1000
    completion_tokens: int = 200
    cost: float | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: str | bytes | dict[str, Any] | None = None

    @classmethod
    def ok(cls, content: str, **kwargs: Any) -> Reply:
        return cls(content=content, **kwargs)

    @classmethod
    def error(
        cls, status: int, message: str, *, retry_after: float | str | None = None, delay_s: float = 0.0
    ) -> Reply:
        """An error in OpenRouter's shape: ``{"error": {"code": status, "message": ...}}``."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        body = {"error": {"code": status, "message": message}}
        return cls(status=status, headers=headers, body=body, delay_s=delay_s)

    def render(self, model: str) -> bytes:
        if self.body is not None:
            raw = self.body
            return (
                raw if isinstance(raw, bytes) else (raw if isinstance(raw, str) else json.dumps(raw)).encode()
            )
        usage: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
        if self.cost is not None:
            usage["cost"] = self.cost
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.content},
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": usage,
        }
        return json.dumps(completion).encode()


Responder = Callable[[RecordedRequest], Reply]


class FakeOpenAIServer:
    """Serves ``POST /v1/chat/completions``; use as a context manager or call start()/stop()."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.responder: Responder | None = None
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a delay
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_reply(self, request: RecordedRequest) -> Reply:
        """Record ``request`` and pick its reply: the script first, then the responder."""
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Reply.error(500, "fake server: no scripted reply left for this request")

    def pause(self, seconds: float) -> bool:
        """Sleep ``seconds`` (a reply's delay); True if the server is stopping meanwhile."""
        return self._stopping.wait(seconds)


class _HTTPServer(ThreadingHTTPServer):
    """Thread per connection, and a listen backlog deep enough for 100 simultaneous connects."""

    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, fake: FakeOpenAIServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real API
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)
    server: _HTTPServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path != "/v1/chat/completions":
            self._send(Reply.error(404, f"no route {self.path}"), "")
            return
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake = self.server.fake
        reply = fake.next_reply(RecordedRequest(self.path, headers, body, time.perf_counter()))
        if reply.delay_s and fake.pause(reply.delay_s):
            return  # shutting down
        self._send(reply, body.get("model", "") if isinstance(body, dict) else "")

    def _send(self, reply: Reply, model: str) -> None:
        send_json(self, reply.status, dict(reply.headers), reply.render(model))

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep test output clean
