"""Holding a fake venue's first answer back, and moving its prices: for tests that pause a
process in the middle of a market sync, then check that what it finishes with is refused."""

from __future__ import annotations

import json
import threading
from decimal import Decimal

from tests.fakes.polymarket_server import FakePolymarket
from tests.fakes.venue_server import Seen


class HoldFirstRequest:
    """The venue's ``after_request`` hook: the first request waits (its answer computed, not
    sent) until ``release``; every later one is answered at once."""

    def __init__(self) -> None:
        self.held, self.released = threading.Event(), threading.Event()
        self._lock = threading.Lock()

    def __call__(self, _seen: Seen) -> None:
        with self._lock:
            first = not self.held.is_set()
            self.held.set()
        if first:
            self.released.wait(timeout=120)


def move_prices(fake: FakePolymarket) -> None:
    """Every market's prices move a cent, so a sync run now has new prices to store."""
    for gamma_id, payload in list(fake.markets.items()):
        yes = Decimal(json.loads(payload["outcomePrices"])[0])
        fake.set_price(gamma_id, yes + Decimal("0.01"))
