"""What a round offers: the cohort's universe filters applied to a point-in-time snapshot.

Filters never invent data: a market without the field a filter needs (volume, close time, a
price for every outcome) is left out rather than guessed in. A market whose close time has passed
is never offered, whatever the filters say: the venue no longer trades it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from arena.cohorts.config import UniverseConfig
from markets.types import MarketSnapshot, PriceSnapshot, SnapshotEntry

_SECONDS_PER_DAY = 86_400


def select_universe(
    snapshot: MarketSnapshot, universe: UniverseConfig, excluded: frozenset[str] = frozenset()
) -> MarketSnapshot:
    """Filter, order and cap the snapshot's markets; the result is what every agent of the round sees."""
    passes = _filter(universe, snapshot.as_of)
    kept = [e for e in snapshot.entries if e.market.market_id not in excluded and passes(e)]
    # the first max_markets in order: documented to equal sorted(...)[:n], without sorting them all
    first = heapq.nsmallest(universe.max_markets, kept, key=_ordering(universe.order_by))
    return MarketSnapshot(as_of=snapshot.as_of, entries=tuple(first))


def _filter(universe: UniverseConfig, as_of: datetime) -> Callable[[SnapshotEntry], bool]:
    """The universe's filters as one test, its settings read once (a round tests every open market)."""
    venues = frozenset(universe.venues)
    min_volume, low, high = universe.min_volume, universe.min_price, universe.max_price
    min_days, max_days = universe.min_days_to_close, universe.max_days_to_close

    def passes(entry: SnapshotEntry) -> bool:
        market = entry.market
        if market.venue not in venues or market.is_closed(as_of):
            return False
        if min_volume is not None and (market.volume is None or market.volume < min_volume):
            return False
        if min_days is not None or max_days is not None:
            if market.close_time is None:
                return False
            days = (market.close_time - as_of).total_seconds() / _SECONDS_PER_DAY
            if min_days is not None and days < min_days:
                return False
            if max_days is not None and days > max_days:
                return False
        return _in_price_band(entry.price, low, high, market.outcomes)

    return passes


def _in_price_band(price: PriceSnapshot, low: Decimal, high: Decimal, outcomes: tuple[str, ...]) -> bool:
    """Every outcome needs a real price inside the band: near-certain markets teach nothing."""
    return all(o in price.prices and low <= price.prices[o] <= high for o in outcomes)


def _ordering(order_by: str) -> Callable[[SnapshotEntry], Any]:
    def by_volume(e: SnapshotEntry) -> tuple[int, Decimal, str]:
        volume = e.market.volume
        return (volume is None, -(volume or Decimal(0)), e.market.market_id)

    def by_close(e: SnapshotEntry) -> tuple[bool, float, str]:
        close = e.market.close_time
        return (close is None, close.timestamp() if close else 0.0, e.market.market_id)

    def by_id(e: SnapshotEntry) -> str:
        return e.market.market_id

    return {"volume": by_volume, "close_time": by_close, "market_id": by_id}[order_by]


def hide_prices(snapshot: MarketSnapshot, market_ids: Collection[str] | None = None) -> MarketSnapshot:
    """The agent-facing snapshot when prices are hidden (of ``market_ids``, or of every market):
    same markets, no prices, no history."""
    entries = tuple(
        replace(e, price=replace(e.price, prices={}, bids={}, asks={}), history=())
        if market_ids is None or e.market.market_id in market_ids
        else e
        for e in snapshot.entries
    )
    return MarketSnapshot(as_of=snapshot.as_of, entries=entries)
