"""A fake Manifold API v0 on loopback: ``/v0/markets``, ``/v0/market/{id}``, ``/v0/bets``.

Shapes follow Manifold's published example responses (manifoldmarkets/manifold
``docs/docs/api.md``, MIT License, © 2022 Manifold Markets, Inc.): ``DOCS_LITE_MARKET`` and
``DOCS_BETS`` below are those examples verbatim except for the comment removals listed in the
shared ``manifold-api-docs-examples/SOURCE.md``. Ids, questions, URLs, dates and probabilities
of ``REAL_MARKETS`` are real Manifold markets from ForecastBench
(forecastingresearch/forecastbench-datasets, CC BY-SA 4.0, © 2024 Forecasting Research
Institute; adapted: a subset of fields). Times are Unix milliseconds, as on Manifold.
"""

from __future__ import annotations

import argparse
import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakes.standalone import AdminError, admin_answer, port_argument, serve_venue_until_interrupted
from tests.fakes.venue_server import FakeVenue, last

# GET /v0/markets?limit=1 example response, first element (MIT, Manifold Markets).
DOCS_LITE_MARKET: dict[str, Any] = {
    "id": "EvIhzcJXwhL0HavaszD7",
    "creatorUsername": "Austin",
    "creatorName": "Austin",
    "createdTime": 1653850472294,
    "creatorAvatarUrl": "https://lh3.googleusercontent.com/a-/AOh14GiZyl1lBehuBMGyJYJhZd-N-mstaUtgE4xdI22lLw=s96-c",
    "closeTime": 1653893940000,
    "question": "Will I write a new blog post today?",
    "url": "https://manifold.markets/Austin/will-i-write-a-new-blog-post-today",
    "pool": 146.73022894879944,
    "probability": 0.8958175225896258,
    "p": 0.08281474972181882,
    "totalLiquidity": 102.65696071594805,
    "outcomeType": "BINARY",
    "mechanism": "cpmm-1",
    "volume": 241,
    "volume24Hours": 0,
    "isResolved": True,
    "resolution": "YES",
    "resolutionTime": 1653924077078,
}

# GET /v0/bets example response (MIT, Manifold Markets): a partly filled limit order, then a market bet.
DOCS_BETS: list[dict[str, Any]] = [
    {
        "isFilled": False,
        "amount": 15.596681605353808,
        "userId": "IPTOzEqrpkWmEzh6hwvAyY9PqFb2",
        "contractId": "Tz5dA01GkK5QKiQfZeDL",
        "probBefore": 0.5730753474948571,
        "isCancelled": False,
        "outcome": "YES",
        "fees": {"creatorFee": 0, "liquidityFee": 0, "platformFee": 0},
        "shares": 31.193363210707616,
        "limitProb": 0.5,
        "id": "yXB8lVbs86TKkhWA1FVi",
        "loanAmount": 0,
        "orderAmount": 100,
        "probAfter": 0.5730753474948571,
        "createdTime": 1659482775970,
        "fills": [
            {
                "timestamp": 1659483249648,
                "matchedBetId": "MfrMd5HTiGASDXzqibr7",
                "amount": 15.596681605353808,
                "shares": 31.193363210707616,
            }
        ],
    },
    {
        "shares": 17.350459904608414,
        "probBefore": 0.5304358279113885,
        "isFilled": True,
        "probAfter": 0.5730753474948571,
        "userId": "IPTOzEqrpkWmEzh6hwvAyY9PqFb2",
        "amount": 10,
        "contractId": "Tz5dA01GkK5QKiQfZeDL",
        "id": "1LPJHNz5oAX4K6YtJlP1",
        "fees": {"platformFee": 0, "liquidityFee": 0, "creatorFee": 0.4251333951457593},
        "isCancelled": False,
        "loanAmount": 0,
        "orderAmount": 10,
        "fills": [
            {"amount": 10, "matchedBetId": None, "shares": 17.350459904608414, "timestamp": 1659482757271}
        ],
        "createdTime": 1659482757271,
        "outcome": "YES",
    },
]

# (id, question, url, createdTime ISO, closeTime ISO, last daily probability) — real, see docstring.
REAL_MARKETS: tuple[tuple[str, str, str, str, str, float], ...] = (
    (
        "0587u5Mk7ng2NaOkgCu1",
        "Will there be a televised match between a robot and a top-10 human tennis player by 2035?",
        "https://manifold.markets/Paul/will-there-be-a-televised-match-bet",
        "2022-11-23T23:30:26+00:00",
        "2035-01-01T01:00:00+00:00",
        0.498785,
    ),
    (
        "0CcIFySHc1Yjv6zVLn2K",
        "Will cryptocurrency replace a major Fiat currency as a primary means of transaction in any country"
        " by 2027?",
        "https://manifold.markets/VerySeriousPoster/will-cryptocurrency-replace-a-major",
        "2024-01-11T11:56:21+00:00",
        "2027-01-01T04:59:00+00:00",
        0.101364,
    ),
    (
        "0XWiAR0EbPj9dU0qNyIP",
        "Will there be a premier league game broadcasted with AI commentators by 2027?",
        "https://manifold.markets/_deleted_/will-there-be-a-premier-league-game",
        "2023-04-08T20:55:02+00:00",
        "2027-12-31T18:29:00+00:00",
        0.2282,
    ),
    (
        "0sEPlhcgPU",
        "Will Project Hail Mary be nominated for Best Picture?",
        "https://manifold.markets/Ziddletwix/will-project-hail-mary-be-nominated",
        "2026-04-04T17:33:10+00:00",
        "2027-01-24T23:59:00+00:00",
        0.716848,
    ),
)


def millis(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def lite_market(index: int, **overrides: Any) -> dict[str, Any]:
    """One of ``REAL_MARKETS`` as an open BINARY LiteMarket, shaped like ``DOCS_LITE_MARKET``."""
    market_id, question, url, created, close, prob = REAL_MARKETS[index]
    base = copy.deepcopy(DOCS_LITE_MARKET)
    base.update(
        id=market_id,
        question=question,
        url=url,
        createdTime=millis(created),
        closeTime=millis(close),
        probability=prob,
        totalLiquidity=1500.0 - index * 100,
        volume=90_000 - index * 1_000,
        isResolved=False,
        lastBetTime=millis("2026-08-20T00:00:00+00:00") - index * 60_000,
        uniqueBettorCount=40 + index,
        token="MANA",
    )
    for key in ("resolution", "resolutionTime"):
        base.pop(key)
    base.update(overrides)
    return base


def multiple_choice_market(index: int, answers: dict[str, float], **overrides: Any) -> dict[str, Any]:
    """One of ``REAL_MARKETS``' dates and sizes as an open MULTIPLE_CHOICE FullMarket whose answers
    (text -> probability, ids ``{id}-a0``, ``{id}-a1``...) sum to one; its id ends in ``-mc``.
    The listing shows it without its answers, as Manifold's LiteMarket does."""
    base = lite_market(index, outcomeType="MULTIPLE_CHOICE", mechanism="cpmm-multi-1")
    market_id = f"{base['id']}-mc"
    for key in ("probability", "p", "pool"):
        base.pop(key)
    base.update(
        id=market_id,
        question=f"Which answer? ({base['question']})",
        shouldAnswersSumToOne=True,
        answers=[
            {
                "id": f"{market_id}-a{i}",
                "text": text,
                "probability": chance,
                "contractId": market_id,
                "index": i,
            }
            for i, (text, chance) in enumerate(answers.items())
        ],
    )
    base.update(overrides)
    return base


FULL_MARKET_ONLY = ("answers", "shouldAnswersSumToOne")  # FullMarket fields a listing leaves out


class FakeManifold(FakeVenue):
    """Markets by id (FullMarket payloads; the listing shows them as LiteMarkets) and bets by market."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.markets: dict[str, dict[str, Any]] = {}
        self.bets: dict[str, list[dict[str, Any]]] = {}

    def add(self, payload: dict[str, Any], bets: list[dict[str, Any]] | None = None) -> None:
        with self.lock:
            self.markets[payload["id"]] = payload
            self.bets[payload["id"]] = bets or []

    def update(self, market_id: str, **fields: Any) -> None:
        with self.lock:
            self.markets[market_id] = {**self.markets[market_id], **fields}

    def set_price(self, market_id: str, yes: float, at_millis: int) -> dict[str, Any]:
        """Move an open market's probability, as a bet at ``at_millis`` would."""
        if not 0 < yes < 1:
            raise AdminError(f"yes must be strictly between 0 and 1, got {yes}")
        market_id = market_id.removeprefix("manifold:")
        with self.lock:
            if self._market(market_id).get("isResolved"):
                raise AdminError(f"market {market_id} is resolved")
            self.update(market_id, probability=yes, lastBetTime=at_millis)
            return self._line(self.markets[market_id])

    def resolve(self, market_id: str, outcome: str, at_millis: int) -> dict[str, Any]:
        """Close and resolve a market (``YES``, ``NO`` or ``CANCEL``) at ``at_millis``."""
        if outcome not in ("YES", "NO", "CANCEL"):
            raise AdminError(f"outcome must be YES, NO or CANCEL, got {outcome!r}")
        market_id = market_id.removeprefix("manifold:")
        with self.lock:
            self._market(market_id)
            self.update(
                market_id, isResolved=True, resolution=outcome, resolutionTime=at_millis, closeTime=at_millis
            )
            return self._line(self.markets[market_id])

    def admin(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        with self.lock:
            listing = [self._line(m) for m in self.markets.values()]
        now = int(datetime.now(UTC).timestamp() * 1000)
        handlers = {
            "price": lambda b: self.set_price(str(b["market"]), _probability(b.get("yes")), now),
            "resolve": lambda b: self.resolve(str(b["market"]), str(b.get("outcome")), now),
        }
        return admin_answer(method, path, body, handlers, listing)

    def _market(self, market_id: str) -> dict[str, Any]:
        found = self.markets.get(market_id.removeprefix("manifold:"))
        if found is None:
            raise AdminError(f"no market {market_id!r}")
        return found

    @staticmethod
    def _line(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "market": payload["id"],
            "arena_id": f"manifold:{payload['id']}",
            "question": payload["question"],
            "probability": payload["probability"],
            "resolution": payload.get("resolution") if payload.get("isResolved") else None,
        }

    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        with self.lock:
            if method == "GET" and path == "/v0/markets":
                return 200, self._list_markets(query)
            if method == "GET" and path.startswith("/v0/market/"):
                found = self.markets.get(path.removeprefix("/v0/market/"))
                if found is None:
                    return 404, {"message": "Contract not found"}
                return 200, {**found, "textDescription": f"Resolves per the creator. {found['question']}"}
            if method == "GET" and path == "/v0/bets":
                return 200, self._list_bets(query)
            return 404, {"message": f"no route {method} {path}"}

    def _list_markets(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        field = {"last-bet-time": "lastBetTime", "created-time": "createdTime"}.get(
            last(query, "sort") or "", "createdTime"
        )
        ordered = sorted(self.markets.values(), key=lambda m: (m.get(field) or 0, m["id"]), reverse=True)
        lite = [{k: v for k, v in m.items() if k not in FULL_MARKET_ONLY} for m in ordered]
        return _page_before(lite, last(query, "before"), int(last(query, "limit") or 500))

    def _list_bets(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        bets = self.bets.get(last(query, "contractId") or "", [])
        after = int(last(query, "afterTime") or 0)
        ordered = sorted(
            (b for b in bets if b["createdTime"] > after), key=lambda b: b["createdTime"], reverse=True
        )
        return _page_before(ordered, last(query, "before"), int(last(query, "limit") or 1000))


def _page_before(items: list[dict[str, Any]], before: str | None, limit: int) -> list[dict[str, Any]]:
    """Items after the one with id ``before`` (Manifold's cursor), at most ``limit`` (max 1000)."""
    if before:
        ids = [item["id"] for item in items]
        items = items[ids.index(before) + 1 :] if before in ids else []
    return items[: min(limit, 1000)]


def _probability(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise AdminError(f"not a number: {value!r}") from None


def main() -> None:
    """``python -m tests.fakes.manifold_server [--port P]``: a fake Manifold API (its real
    markets, open) until Ctrl-C, with the admin API of ``tests.fakes.standalone``.

    Prints its base URL on the first line, for ``ARENA_MANIFOLD_URL`` (or ``arena markets sync
    --venue manifold --manifold-url URL``) in another process.
    """
    parser = argparse.ArgumentParser(description=main.__doc__)
    port_argument(parser)
    args = parser.parse_args()
    now = datetime.now(UTC)
    with FakeManifold(args.port) as fake:
        for index in range(len(REAL_MARKETS)):  # open whenever it runs: closing 20 to 50 days out
            close = int((now + timedelta(days=20 + 10 * index)).timestamp() * 1000)
            fake.add(lite_market(index, closeTime=close))
        serve_venue_until_interrupted(fake.url)


if __name__ == "__main__":
    main()
