"""Running a fake on its own: ``python -m tests.fakes.<name>`` prints its URL and serves until Ctrl-C.

Each venue fake also answers an admin API on the same port, so a person (or a test in another
process) can change the world the arena syncs from:

- ``GET /_admin/markets``: the markets, with the ids the admin calls take and their YES price;
- ``POST /_admin/price`` ``{"market": ID, "yes": "0.61"}``: move a binary market's price;
- ``POST /_admin/resolve`` ``{"market": ID, "outcome": "YES"}``: close and resolve it (``NO``,
  and ``50-50`` on Polymarket or ``CANCEL`` on Manifold, too).

The arena never calls these paths; they are not part of any venue's API.
"""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Callable
from typing import Any

ADMIN = "/_admin/"


class AdminError(ValueError):
    """A bad admin request: answered 400 with the message."""


def admin_answer(
    method: str, path: str, body: Any, handlers: dict[str, Callable[[dict[str, Any]], Any]], listing: Any
) -> tuple[int, Any]:
    """The admin API's answer: ``listing`` for ``GET /_admin/markets``, else the POST handler
    named by the path (``price``, ``resolve``), given the JSON body."""
    command = path.removeprefix(ADMIN)
    if method == "GET" and command == "markets":
        return 200, listing
    if method != "POST" or command not in handlers:
        return 404, {"error": f"no admin command {method} {path}"}
    if not isinstance(body, dict) or "market" not in body:
        return 400, {"error": 'expected a JSON object with "market"'}
    try:
        return 200, handlers[command](body)
    except (AdminError, KeyError) as exc:
        return 400, {"error": str(exc)}


def port_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free one)")


def serve_venue_until_interrupted(url: str) -> None:
    """A venue fake's first lines: its URL, then where its admin API is."""
    serve_until_interrupted(
        url, f"admin: GET {url}/_admin/markets, POST {url}/_admin/price, {url}/_admin/resolve"
    )


def serve_until_interrupted(*lines: str) -> None:
    """Print ``lines`` (the URL first), then block until SIGINT or SIGTERM."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda _signum, _frame: stop.set())
    for line in lines:
        print(line, flush=True)
    while not stop.wait(0.5):
        pass
