"""A scriptable OpenAI-compatible chat-completions server on loopback (real HTTP/1.1, asyncio).

Tests queue ``Reply`` objects (one per request, in order) or install a ``responder`` that
builds a reply from the request; each reply can be delayed, fail with an OpenAI/OpenRouter
style error body, carry ``Retry-After``, come back empty or cut at the token limit. Every
request is recorded (headers, JSON body, arrival time) for assertions.

The server is one asyncio loop in a background thread (h11 parses HTTP, keep-alive as a real
API keeps it), so 100 concurrent requests that each wait 1 s cost it a few milliseconds of CPU
and are answered together in about 1 s. It stands in for a remote provider, which costs the
client's machine nothing while it thinks; a thread per request did cost it (the benchmark's
client and server share two cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import h11

from tests.fakes.standalone import port_argument, serve_until_interrupted

_READ_CHUNK = 65_536


@dataclass(frozen=True)
class RecordedRequest:
    path: str  # the request target, query included
    headers: dict[str, str]  # lower-cased names; a repeated field's values joined by ", "
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
    # The assistant message's ``tool_calls`` entries, sent as given (malformed ones included).
    tool_calls: list[Any] | None = None

    @classmethod
    def ok(cls, content: str, **kwargs: Any) -> Reply:
        return cls(content=content, **kwargs)

    @classmethod
    def calls(cls, *calls: tuple[str, str | dict[str, Any]], **kwargs: Any) -> Reply:
        """A turn that calls tools: ``(name, arguments)`` pairs, arguments as a JSON text or a dict
        (encoded), with ids ``call_1``, ``call_2``... as OpenAI's ``finish_reason=tool_calls``."""
        entries = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls, start=1)
        ]
        return cls(content=None, finish_reason="tool_calls", tool_calls=entries, **kwargs)

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
                    "message": {"role": "assistant", "content": self.content}
                    | ({"tool_calls": self.tool_calls} if self.tool_calls is not None else {}),
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": usage,
        }
        return json.dumps(completion).encode()


Responder = Callable[[RecordedRequest], Reply]


class FakeOpenAIServer:
    """Serves ``POST /v1/chat/completions``; use as a context manager or call start()/stop().

    The port is bound at construction, so ``base_url`` is known before the server starts. A
    reply's delay ends early when the server stops (its connection is dropped unanswered).
    """

    def __init__(self, port: int = 0) -> None:
        self.requests: list[RecordedRequest] = []
        self.responder: Responder | None = None
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._socket = socket.create_server(("127.0.0.1", port), backlog=1024)  # 100 simultaneous connects
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-openai", daemon=True)
        self._connections: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._open(), self._loop).result(timeout=5)
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=5)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._loop.close()
        self._socket.close()

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

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._track, sock=self._socket, limit=_READ_CHUNK)

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()  # ends pending delays and drops their connections
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _track(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, h11.ProtocolError):
            pass  # a client that gave up (a timeout test) or sent garbage is not the server's error
        except asyncio.CancelledError:
            pass  # stop(): the task ends here (Python 3.11's start_server logs a cancelled handler)
        finally:
            self._connections.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Answer requests on one kept-alive connection until the client closes it."""
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stall
        conn = h11.Connection(h11.SERVER)
        while True:
            received = await _read_request(conn, reader)
            if received is None:
                return
            target, headers, raw = received
            reply, model = self._answer(target, headers, raw)
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            writer.write(_response(conn, reply, model))
            await writer.drain()
            if conn.our_state is h11.MUST_CLOSE:
                return
            conn.start_next_cycle()

    def _answer(self, target: str, headers: dict[str, str], raw: bytes) -> tuple[Reply, str]:
        if target.partition("?")[0] != "/v1/chat/completions":  # a query (api-version=...) is fine
            return Reply.error(404, f"no route {target}"), ""
        try:  # as strict as a real API: UTF-8 only, and NaN/Infinity are not JSON
            body: Any = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except ValueError:  # UnicodeDecodeError too: the body is recorded as text, for tests to see
            body = raw.decode(errors="replace")
        reply = self.next_reply(RecordedRequest(target, headers, body, time.perf_counter()))
        return reply, body.get("model", "") if isinstance(body, dict) else ""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


async def _read_request(
    conn: h11.Connection, reader: asyncio.StreamReader
) -> tuple[str, dict[str, str], bytes] | None:
    """The next request's target, headers (lower-cased names) and body; None once the client closes."""
    request: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(_READ_CHUNK))  # b"" at end of stream
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            headers: dict[str, str] = {}
            for name, value in request.headers:  # a repeated field is combined, as RFC 9110 reads it
                key = name.decode()
                headers[key] = f"{headers[key]}, {value.decode()}" if key in headers else value.decode()
            return request.target.decode(), headers, bytes(body)
        else:  # ConnectionClosed
            return None


def _response(conn: h11.Connection, reply: Reply, model: str) -> bytes:
    body = reply.render(model)
    headers = [
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        *reply.headers.items(),
    ]
    try:
        reason = HTTPStatus(reply.status).phrase
    except ValueError:
        reason = ""
    head = conn.send(h11.Response(status_code=reply.status, headers=headers, reason=reason))
    data = conn.send(h11.Data(data=body))
    end = conn.send(h11.EndOfMessage())
    return b"".join(part for part in (head, data, end) if part)


MARKET_ID = re.compile(r'"id": "((?:polymarket|manifold):[^"]+)"')


class FirstMarketBettor:
    """A provider that reads the markets of the prompt and answers in the arena's decision
    format: a ``stake`` bet on YES in the first market offered, stated at ``probability`` (with
    ``hold``, no bet, and no market: a valid empty answer). Deterministic, so a walkthrough run
    twice does the same."""

    def __init__(self, *, stake: int = 100, probability: float = 0.6, hold: bool = False) -> None:
        self.stake, self.probability, self.hold = stake, probability, hold

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = request.body.get("messages", []) if isinstance(request.body, dict) else []
        text = " ".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
        markets = MARKET_ID.findall(text)
        if self.hold or not markets:
            answer: dict[str, Any] = {"reasoning": "holding", "actions": [], "probabilities": {}}
        else:
            bet = {"type": "bet", "market_id": markets[0], "outcome": "YES", "amount": self.stake}
            answer = {"reasoning": "fake", "actions": [bet], "probabilities": {markets[0]: self.probability}}
        return Reply.ok(json.dumps(answer), cost=0.0001)


def main() -> None:
    """``python -m tests.fakes.openai_server [--port P] [--hold]``: an OpenAI-compatible provider
    on loopback until Ctrl-C, answering every request with ``FirstMarketBettor``.

    Prints its base URL (``.../v1``) on the first line: an LLM agent's ``base_url``, with
    ``api_key_env = ""`` (it asks for no key).
    """
    parser = argparse.ArgumentParser(description=main.__doc__)
    port_argument(parser)
    parser.add_argument("--hold", action="store_true", help="never bet: answer with no action")
    args = parser.parse_args()
    with FakeOpenAIServer(args.port) as server:
        server.responder = FirstMarketBettor(hold=args.hold)
        serve_until_interrupted(server.base_url)


if __name__ == "__main__":
    main()
