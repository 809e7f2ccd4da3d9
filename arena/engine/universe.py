"""What a round offers: the cohort's universe filters applied to a point-in-time snapshot.

Filters never invent data: a market without the field a filter needs (volume, close time, a
price for every outcome) is left out rather than guessed in.
"""

from __future__ import annotations

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
    kept = [
        e
        for e in snapshot.entries
        if e.market.market_id not in excluded and _passes(e, universe, snapshot.as_of)
    ]
    kept.sort(key=_ordering(universe.order_by))
    return MarketSnapshot(as_of=snapshot.as_of, entries=tuple(kept[: universe.max_markets]))


def _passes(entry: SnapshotEntry, universe: UniverseConfig, as_of: datetime) -> bool:
    market = entry.market
    if market.venue not in universe.venues:
        return False
    if universe.min_volume is not None and (market.volume is None or market.volume < universe.min_volume):
        return False
    if universe.min_days_to_close is not None or universe.max_days_to_close is not None:
        if market.close_time is None:
            return False
        days = (market.close_time - as_of).total_seconds() / _SECONDS_PER_DAY
        if universe.min_days_to_close is not None and days < universe.min_days_to_close:
            return False
        if universe.max_days_to_close is not None and days > universe.max_days_to_close:
            return False
    return _in_price_band(entry.price, universe.min_price, universe.max_price, market.outcomes)


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
