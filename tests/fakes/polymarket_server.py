"""A fake Polymarket on loopback: Gamma (``/markets/keyset``, ``/events/keyset``, ``/markets/{id}``)
and CLOB (``/midpoint``, ``/midpoints``, ``/book``, ``/books``, ``/prices-history``) on one port.

Wire formats follow the documented shapes (docs/market-apis.md §1.2–1.6): ``outcomes``,
``outcomePrices`` and ``clobTokenIds`` are JSON arrays inside strings, volumes are decimal
strings with number twins, CLOB prices are strings, book bids ascend and asks descend, keyset
pages end without ``next_cursor``, ``offset`` is refused with 422, an omitted ``closed`` means
``closed=false``, and a ``cursor`` parameter (instead of ``after_cursor``) is ignored, as live.

Condition ids, questions, slugs, dates and prices of ``REAL_MARKETS`` are real Polymarket markets
taken from ForecastBench (forecastingresearch/forecastbench-datasets, CC BY-SA 4.0, © 2024
Forecasting Research Institute; adapted: a subset of fields). Gamma ids and CLOB token ids are
synthetic (ForecastBench does not carry them): token ids are 77-digit decimals derived from the
condition id, shaped like the real ones.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from tests.fakes.standalone import AdminError, admin_answer, port_argument, serve_venue_until_interrupted
from tests.fakes.venue_server import FakeVenue, Seen, flag, last

# (conditionId, question, slug, startDateIso, endDate, last daily YES price) — real, see module docstring.
REAL_MARKETS: tuple[tuple[str, str, str, str, str, str], ...] = (
    (
        "0x010f3f24ab463669b4d3dee775864db64b2441f8fa7a34725765ff0d7c667ec8",
        "Will Ken Sim win the 2026 Vancouver mayoral election?",
        "will-ken-sim-win-the-2026-vancouver-mayoral-election",
        "2026-04-02",
        "2026-10-17T00:00:00Z",
        "0.365",
    ),
    (
        "0x024b68f77bfc019341ee3db8f57c103334e4b9430bba4746d8c94aafd8b36fee",
        "Will Bitcoin dip to $45,000 by December 31, 2026?",
        "will-bitcoin-dip-to-45000-by-december-31-2026-674",
        "2025-11-24",
        "2027-01-01T05:00:00Z",
        "0.245",
    ),
    (
        "0x0ea8005efbc460378340a2f28a6d97b0d1d9d9d7fba4d16f529b8a415dca77a2",
        "Will GPT-6 be released before GTA VI?",
        "will-gpt-6-be-released",
        "2025-08-07",
        "2026-12-31T12:00:00Z",
        "0.505",
    ),
    (
        "0x12b727031b38130d945b3e164386874360d9a32fdd7e3d00ed2adb13857e089b",
        "Will the Democrats win the Texas governor race in 2026?",
        "will-the-democrats-win-the-texas-governor-race-in-2026",
        "2025-10-13",
        "2026-11-03T00:00:00Z",
        "0.15",
    ),
    (
        "0x12dc2b61723b2a54fc1947a307389b5f32038e7a29a0e936ad1fe410b969d06a",
        "Will Harry Kane win the 2026 Ballon d'Or?",
        "will-harry-kane-win-the-2026-ballon-dor",
        "2025-09-22",
        "2026-10-31T00:00:00Z",
        "0.6225",
    ),
    (
        "0x115374e9cb26f7c375f35cdfec08167024dbfc5a20f339806d81236ed25ab781",
        "Miguel Díaz-Canel out as leader of Cuba by December 31?",
        "miguel-daz-canel-out-as-leader-of-cuba-by-december-31-113-682",
        "2026-01-05",
        "2026-12-31T00:00:00Z",
        "0.175",
    ),
    (
        "0x2bde6486e7067f48ee21344d8b5c1af458732536eb4d080932c88c3a7c2d2126",
        "Starmer out by December 31, 2026?",
        "starmer-out-by-december-31-2026-936-416-977-234-134-475",
        "2025-11-05",
        "2026-12-31T12:00:00Z",
        "0.9885",
    ),
    (
        "0x52a5ce595e0f0816e17e5f40dbd5967c88beb4b9f21000bfdd9a1ff26c281fdd",
        "Will Real Madrid win the 2025–26 Champions League?",
        "will-real-madrid-win-the-202526-champions-league",
        "2025-07-28",
        "2026-05-31T00:00:00Z",
        "0.0005",
    ),
)
NO_ORDERBOOK = {"error": "No orderbook exists for the requested token id"}
_PAGING = ("after_cursor", "limit", "cursor")


def token_ids(condition_id: str, count: int = 2) -> list[str]:
    """Synthetic CLOB token ids for a market: one 77-digit decimal per outcome."""
    return [
        str(int(hashlib.sha256(f"{condition_id}:{i}".encode()).hexdigest(), 16) % 10**77).rjust(77, "1")
        for i in range(count)
    ]


def synthetic_condition_id(index: int) -> str:
    return "0x" + hashlib.sha256(f"bench-market-{index}".encode()).hexdigest()


def gamma_market(
    gamma_id: str,
    condition_id: str,
    question: str,
    *,
    slug: str = "",
    start: str = "2026-01-01",
    end: str = "2026-12-31T00:00:00Z",
    prices: tuple[str, ...] = ("0.5", "0.5"),
    outcomes: tuple[str, ...] = ("Yes", "No"),
    volume: float = 250_000.0,
    liquidity: float = 20_000.0,
    closed: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A Gamma market payload in the live shape (a realistic subset of its 171 fields)."""
    return {
        "id": gamma_id,
        "question": question,
        "conditionId": condition_id,
        "questionID": "0x" + hashlib.sha256(question.encode()).hexdigest(),
        "slug": slug or f"market-{gamma_id}",
        "description": f"This market will resolve according to its rules. ({question})",
        "outcomes": json.dumps(list(outcomes)),
        "outcomePrices": json.dumps(list(prices)),
        "clobTokenIds": json.dumps(token_ids(condition_id, len(outcomes))),
        "volume": repr(volume),
        "volumeNum": volume,
        "liquidity": repr(liquidity),
        "liquidityNum": liquidity,
        "volume24hr": volume / 50,
        "active": True,
        "closed": closed,
        "archived": False,
        "acceptingOrders": not closed,
        "enableOrderBook": True,
        "startDate": f"{start}T00:00:00.000Z",
        "startDateIso": start,
        "endDate": end,
        "endDateIso": end[:10],
        "umaResolutionStatuses": "[]",
        "negRisk": False,
        "orderPriceMinTickSize": 0.001,
        "orderMinSize": 5,
        "category": "Politics",
        **extra,
    }


def real_market(index: int, gamma_id: str | None = None, **overrides: Any) -> dict[str, Any]:
    """One of ``REAL_MARKETS`` as a Gamma payload (volume falling with the index, so order is known)."""
    condition, question, slug, start, end, yes = REAL_MARKETS[index]
    no = str(Decimal(1) - Decimal(yes))
    fields: dict[str, Any] = {
        "slug": slug,
        "start": start,
        "end": end,
        "prices": (yes, no),
        "volume": 1_000_000.0 - index * 10_000,
        **overrides,
    }
    return gamma_market(gamma_id or str(560_000 + index), condition, question, **fields)


@contextmanager
def real_polymarket() -> Iterator[FakePolymarket]:
    """A started fake Polymarket listing every one of ``REAL_MARKETS``."""
    with FakePolymarket() as fake:
        for index in range(len(REAL_MARKETS)):
            fake.add(real_market(index))
        yield fake


class FakePolymarket(FakeVenue):
    """Gamma and CLOB state: markets by Gamma id, and per token a midpoint, a book and a history."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.markets: dict[str, dict[str, Any]] = {}
        self.events: dict[str, dict[str, Any]] = {}
        self.mids: dict[str, Any] = {}
        self.books: dict[str, dict[str, Any]] = {}
        self.histories: dict[str, list[dict[str, Any]]] = {}
        self.after_request: Callable[[Seen], None] | None = None
        self._version = 0  # bumped by every change to markets or events (listings are cached per version)
        self._listings: dict[tuple[Any, ...], tuple[list[tuple[float, int]], list[dict[str, Any]]]] = {}

    def add(
        self, payload: dict[str, Any], *, mids: tuple[Any, ...] | None = None, books: bool = True
    ) -> None:
        """List a market; its tokens get midpoints (default: its outcomePrices) and a 1-cent book."""
        tokens = json.loads(payload["clobTokenIds"])
        values = mids if mids is not None else tuple(json.loads(payload["outcomePrices"]))
        with self.lock:
            self.markets[payload["id"]] = payload
            self._version += 1
            for token, mid in zip(tokens, values, strict=True):
                self.set_mid(token, mid, payload["conditionId"], books=books)

    def set_mid(self, token: str, mid: Any, condition_id: str = "", *, books: bool = True) -> None:
        """Set a token's midpoint exactly as it will be sent (None removes its order book)."""
        with self.lock:
            if mid is None:
                self.mids.pop(token, None)
                self.books.pop(token, None)
                return
            self.mids[token] = mid
            if books and isinstance(mid, str) and _is_unit_decimal(mid):
                self.books[token] = _book(token, condition_id, Decimal(mid))

    def add_event(self, event_id: str, market_ids: list[str], **fields: Any) -> None:
        """An event embedding the given markets (by Gamma id) in ``/events/keyset``."""
        with self.lock:
            self.events[event_id] = {"id": event_id, "closed": False, **fields, "market_ids": market_ids}
            self._version += 1

    def update(self, gamma_id: str, **fields: Any) -> None:
        with self.lock:
            self.markets[gamma_id] = {**self.markets[gamma_id], **fields}
            self._version += 1

    def remove(self, gamma_id: str) -> None:
        with self.lock:
            payload = self.markets.pop(gamma_id)
            self._version += 1
            for token in json.loads(payload["clobTokenIds"]):
                self.set_mid(token, None)

    def populate(self, count: int) -> None:
        """``count`` markets cycling through the real ones, with distinct ids and falling volumes."""
        for i in range(count):
            _, question, slug, start, end, yes = REAL_MARKETS[i % len(REAL_MARKETS)]
            if Decimal(yes) > Decimal("0.95") or Decimal(yes) < Decimal("0.05"):
                yes, end = "0.5", "2026-12-31T00:00:00Z"  # keep every synthetic market open and undecided
            self.add(
                gamma_market(
                    str(700_000 + i),
                    synthetic_condition_id(i),
                    f"{question} (#{i})",
                    slug=f"{slug}-{i}",
                    start=start,
                    end=end,
                    prices=(yes, str(Decimal(1) - Decimal(yes))),
                    volume=5_000_000.0 - i * 100,
                )
            )

    def set_price(self, ref: str, yes: Decimal) -> dict[str, Any]:
        """Move a binary market (by Gamma id or condition id) to ``yes``: its Gamma prices, and
        its tokens' midpoints and books; returns the market's new admin line."""
        if not Decimal(0) < yes < Decimal(1):
            raise AdminError(f"yes must be strictly between 0 and 1, got {yes}")
        with self.lock:
            gamma_id = self._gamma_id(ref)
            payload = self.markets[gamma_id]
            if len(json.loads(payload["outcomes"])) != 2 or payload.get("closed"):
                raise AdminError(f"market {ref} is not an open binary market")
            prices = [str(yes), str(Decimal(1) - yes)]
            self.update(gamma_id, outcomePrices=json.dumps(prices))
            for token, mid in zip(json.loads(payload["clobTokenIds"]), prices, strict=True):
                self.set_mid(token, mid, payload["conditionId"])
            return self._line(self.markets[gamma_id])

    def resolve(self, ref: str, outcome: str, closed_at: str) -> dict[str, Any]:
        """Close a binary market and resolve it as UMA would (``YES``, ``NO`` or ``50-50``): final
        payouts in ``outcomePrices``, status ``resolved``, no order book any more."""
        payouts = {"YES": ["1", "0"], "NO": ["0", "1"], "50-50": ["0.5", "0.5"]}
        if outcome not in payouts:
            raise AdminError(f"outcome must be one of {sorted(payouts)}, got {outcome!r}")
        with self.lock:
            gamma_id = self._gamma_id(ref)
            payload = self.markets[gamma_id]
            self.update(
                gamma_id,
                closed=True,
                acceptingOrders=False,
                outcomePrices=json.dumps(payouts[outcome]),
                umaResolutionStatus="resolved",
                closedTime=closed_at,
            )
            for token in json.loads(payload["clobTokenIds"]):
                self.set_mid(token, None)
            return self._line(self.markets[gamma_id])

    def admin(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        with self.lock:
            listing = [self._line(m) for m in self.markets.values()]
        handlers = {
            "price": lambda b: self.set_price(str(b["market"]), _decimal(b.get("yes"))),
            "resolve": lambda b: self.resolve(str(b["market"]), str(b.get("outcome")), _now_iso()),
        }
        return admin_answer(method, path, body, handlers, listing)

    def _gamma_id(self, ref: str) -> str:
        if ref in self.markets:
            return ref
        found = [
            g
            for g, m in self.markets.items()
            if m["conditionId"] == ref or f"polymarket:{m['conditionId']}" == ref
        ]
        if not found:
            raise AdminError(f"no market {ref!r} (give its Gamma id or condition id)")
        return found[0]

    @staticmethod
    def _line(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "market": payload["id"],
            "arena_id": f"polymarket:{payload['conditionId']}",
            "question": payload["question"],
            "prices": json.loads(payload["outcomePrices"]),
            "closed": payload.get("closed", False),
        }

    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        with self.lock:
            answer = self._route(method, path, query, body)
        if self.after_request is not None:
            self.after_request(Seen(method, path, query, body))
        return answer

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        gamma: dict[str, Callable[[dict[str, list[str]]], tuple[int, Any]]] = {
            "/markets/keyset": lambda q: self._keyset(q, "markets", list(self.markets.values()), 100),
            "/events/keyset": lambda q: self._keyset(q, "events", self._event_payloads(), 500),
            "/midpoint": lambda q: self._one_token(q, lambda t: {"mid": self.mids[t]}),
            "/book": lambda q: self._one_token(q, lambda t: self.books[t]),
            "/prices-history": self._history,
        }
        if method == "GET" and path in gamma:
            return gamma[path](query)
        if method == "GET" and path.startswith("/markets/"):
            found = self.markets.get(path.removeprefix("/markets/"))
            return (200, found) if found else (404, {"type": "not found", "error": "market not found"})
        if method == "POST" and path in ("/midpoints", "/books"):
            return self._batch(path, body)
        return 404, {"error": f"no route {method} {path}"}

    def _keyset(
        self, query: dict[str, list[str]], key: str, items: list[dict[str, Any]], cap: int
    ) -> tuple[int, Any]:
        if "offset" in query:
            return 422, {"type": "validation error", "error": "offset is not supported; use after_cursor"}
        keys, chosen = self._ordered(query, key, items)
        cursor = last(query, "after_cursor")
        start = bisect_right(keys, tuple(json.loads(base64.urlsafe_b64decode(cursor)))) if cursor else 0
        limit = min(int(last(query, "limit") or 20), cap)
        page = chosen[start : start + limit]
        answer: dict[str, Any] = {key: page}
        if start + limit < len(chosen):
            answer["next_cursor"] = base64.urlsafe_b64encode(
                json.dumps(keys[start + limit - 1]).encode()
            ).decode()
        return 200, answer

    def _ordered(
        self, query: dict[str, list[str]], key: str, items: list[dict[str, Any]]
    ) -> tuple[list[tuple[float, int]], list[dict[str, Any]]]:
        """The filtered, ordered listing and its sort keys; cached until the markets change, so a
        10,000-market benchmark measures the client rather than this server's sorting."""
        signature = (
            key,
            self._version,
            tuple(sorted((k, tuple(v)) for k, v in query.items() if k not in _PAGING)),
        )
        if signature not in self._listings:
            closed = flag(query, "closed") or False  # omitted means closed=false on /markets
            order, sign = last(query, "order"), 1 if flag(query, "ascending") else -1
            chosen = [m for m in items if bool(m.get("closed")) == closed and _matches(m, query)]
            ordered = sorted(
                ((sign * float(m.get(order) or 0) if order else 0.0, int(m["id"])), m) for m in chosen
            )
            self._listings = {signature: ([k for k, _ in ordered], [m for _, m in ordered])}
        return self._listings[signature]

    def _event_payloads(self) -> list[dict[str, Any]]:
        out = []
        for event in self.events.values():
            markets = [self.markets[g] for g in event["market_ids"] if g in self.markets]
            out.append({k: v for k, v in event.items() if k != "market_ids"} | {"markets": markets})
        return out

    def _one_token(self, query: dict[str, list[str]], answer: Callable[[str], Any]) -> tuple[int, Any]:
        token = last(query, "token_id")
        if not token:
            return 400, {"error": "Invalid token id"}
        return (200, answer(token)) if token in self.mids else (404, NO_ORDERBOOK)

    def _batch(self, path: str, body: Any) -> tuple[int, Any]:
        if not isinstance(body, list) or len(body) > 500:
            return 400, {"error": "expected at most 500 {token_id} objects"}
        tokens = [item["token_id"] for item in body]
        if path == "/midpoints":
            return 200, {t: self.mids[t] for t in tokens if t in self.mids}
        return 200, [self.books[t] for t in tokens if t in self.books]

    def _history(self, query: dict[str, list[str]]) -> tuple[int, Any]:
        token = last(query, "market")
        if not token:
            return 400, {"error": "market is required"}
        start, end = int(last(query, "startTs") or 0), int(last(query, "endTs") or 2**40)
        points = [p for p in self.histories.get(token, []) if start <= p["t"] <= end]
        return 200, {"history": points}


def _matches(market: dict[str, Any], query: dict[str, list[str]]) -> bool:
    ids, conditions = query.get("id"), query.get("condition_ids")
    if ids and market["id"] not in ids:
        return False
    if conditions and market.get("conditionId") not in conditions:
        return False
    for name, field in (("liquidity_num_min", "liquidityNum"), ("liquidity_min", "liquidity")):
        minimum = last(query, name)
        if minimum and float(market.get(field) or 0) < float(minimum):
            return False
    end_max = last(query, "end_date_max")
    return not (end_max and market.get("endDate") and market["endDate"] > end_max.replace("+00:00", "Z"))


def _is_unit_decimal(text: str) -> bool:
    try:
        return Decimal(0) <= Decimal(text) <= Decimal(1)
    except ArithmeticError:
        return False


def _book(token: str, condition_id: str, mid: Decimal) -> dict[str, Any]:
    """A book one cent wide around ``mid``, in CLOB order: bids ascending, asks descending."""
    bid, ask = max(Decimal("0.001"), mid - Decimal("0.005")), min(Decimal("0.999"), mid + Decimal("0.005"))
    return {
        "market": condition_id,
        "asset_id": token,
        "timestamp": "1755777600000",
        "hash": hashlib.sha1(f"{token}{mid}".encode(), usedforsecurity=False).hexdigest(),
        "bids": [{"price": str(p), "size": "150"} for p in (bid - Decimal("0.01"), bid) if p > 0],
        "asks": [{"price": str(p), "size": "120"} for p in (ask + Decimal("0.01"), ask) if p < 1],
        "min_order_size": "5",
        "tick_size": "0.001",
        "last_trade_price": str(mid),
        "neg_risk": False,
    }


def open_from_now(fake: FakePolymarket, now: datetime) -> None:
    """Keep every market open and undecided whenever the fake runs: closing 20 to 80 days from
    ``now`` (the real markets' dates have passed or will), priced inside (0.05, 0.95)."""
    for index, gamma_id in enumerate(sorted(fake.markets)):
        end = (now + timedelta(days=20 + (index * 7) % 60)).strftime("%Y-%m-%dT00:00:00Z")
        fake.update(gamma_id, endDate=end, endDateIso=end[:10])
        yes = Decimal(json.loads(fake.markets[gamma_id]["outcomePrices"])[0])
        if not Decimal("0.05") < yes < Decimal("0.95"):
            fake.set_price(gamma_id, Decimal("0.5"))


def _decimal(value: Any) -> Decimal:
    try:
        return Decimal(str(value))
    except ArithmeticError:
        raise AdminError(f"not a decimal number: {value!r}") from None


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def main() -> None:
    """``python -m tests.fakes.polymarket_server [--markets N] [--port P]``: a fake Polymarket
    (Gamma and CLOB on one port) until Ctrl-C, with the admin API of ``tests.fakes.standalone``.

    Prints its base URL on the first line, for ``ARENA_GAMMA_URL`` and ``ARENA_CLOB_URL`` (or
    ``arena markets sync --gamma-url URL --clob-url URL``) in another process.
    """
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--markets", type=int, default=len(REAL_MARKETS), help="how many markets to list")
    port_argument(parser)
    args = parser.parse_args()
    with FakePolymarket(args.port) as fake:
        if args.markets <= len(REAL_MARKETS):
            for index in range(args.markets):
                fake.add(real_market(index))
        else:
            fake.populate(args.markets)
        open_from_now(fake, datetime.now(UTC))
        serve_venue_until_interrupted(fake.url)


if __name__ == "__main__":
    main()
