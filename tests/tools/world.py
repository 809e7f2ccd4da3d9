"""A small replay dataset for the tool tests, with planted traps.

- ``RAIN``: priced daily from day 0, YES = 0.30 + 0.01·day, except on ``PLANTED_DAY`` where its
  price is ``PLANTED`` (a value no other price has); resolves YES on day 22.
- ``FED``: priced days 0–9; resolves NO on day 10 (gone from every tool from then on).
- ``ZEBRA``: first priced on day 15 (a market from the future before then); never resolves.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from agents.types import PortfolioView
from arena.tools.base import RoundFacts, ToolContext
from markets.replay import DatasetInfo, ReplaySource, write_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue
from portfolio.units import Money

D0 = datetime(2025, 1, 1, tzinfo=UTC)
RAIN, FED, ZEBRA = "polymarket:rain", "polymarket:fed", "manifold:zebra"
PLANTED = Decimal("0.1234567891")
PLANTED_DAY = 21
ZEBRA_OPENS = 15


def day(n: float) -> datetime:
    return D0 + timedelta(days=n)


def _price(market_id: str, n: int, yes: Decimal) -> PriceSnapshot:
    return PriceSnapshot(market_id, {"YES": yes, "NO": 1 - yes}, day(n), "test")


def write_world(directory: Path) -> ReplaySource:
    markets = [
        Market(
            Venue.POLYMARKET,
            "rain",
            "Will it rain in Paris on 2025-01-20?",
            description="Resolves YES if Meteo-France reports rain in Paris.",
            close_time=day(22),
            url="https://polymarket.com/event/rain",
        ),
        Market(
            Venue.POLYMARKET,
            "fed",
            "Will the Fed cut rates in January?",
            description="Resolves YES if the FOMC lowers the target range.",
            close_time=day(10),
        ),
        Market(
            Venue.MANIFOLD,
            "zebra",
            "Will a zebra be born at the Paris zoo?",
            description="Resolves YES if the zoo announces a zebra birth.",
            close_time=day(60),
        ),
    ]
    prices = [
        _price(RAIN, n, PLANTED if n == PLANTED_DAY else Decimal("0.30") + Decimal("0.01") * n)
        for n in range(22)
    ]
    prices += [_price(FED, n, Decimal("0.2")) for n in range(10)]
    prices += [_price(ZEBRA, n, Decimal("0.6")) for n in range(ZEBRA_OPENS, 30)]
    resolutions = [
        Resolution.binary(RAIN, ResolutionKind.YES, day(22), "test"),
        Resolution.binary(FED, ResolutionKind.NO, day(10), "test"),
    ]
    info = DatasetInfo(name="tools", version="1", source="handmade", license="CC0", created_with="tests")
    write_dataset(directory, markets=markets, prices=prices, resolutions=resolutions, info=info)
    return ReplaySource.from_directory(directory)


def facts_at(source: ReplaySource, at: datetime, **kwargs: object) -> RoundFacts:
    options: dict[str, object] = {"excluded": frozenset(), "prices_visible": True} | kwargs
    return RoundFacts.build(at, source.snapshot(at), source.open_markets(at), **options)  # type: ignore[arg-type]


def context(facts: RoundFacts) -> ToolContext:
    return ToolContext(facts, PortfolioView(cash=Money(Decimal(1000)), max_bet=Money(Decimal(100))))
