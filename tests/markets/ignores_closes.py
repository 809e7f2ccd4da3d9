"""A replay source that forgets close times, for the tests proving that nothing downstream trusts
a source to leave closed markets out (the point-in-time check flags it, the engine refuses them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from markets.replay import ReplaySource
from markets.types import Market, MarketSnapshot, SnapshotEntry


class IgnoresCloses:
    """``inner`` except that a closed, unresolved market stays open and in the snapshot (at its
    latest price) until it resolves, as a source written without the rule would serve it."""

    def __init__(self, inner: ReplaySource) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _closed(self, as_of: datetime) -> list[Market]:
        data = self.inner.dataset
        resolved = {r.market_id for r in self.inner.resolutions(as_of)}
        return [
            market
            for key, market in data.markets.items()
            if market.is_closed(as_of) and data.series[key].first_time <= as_of and key not in resolved
        ]

    def open_markets(self, as_of: datetime) -> list[Market]:
        return self.inner.open_markets(as_of) + self._closed(as_of)

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        honest = self.inner.snapshot(as_of)
        closed = {m.market_id: m for m in self._closed(as_of)}
        prices = self.inner.latest_prices(sorted(closed), as_of)
        extra = tuple(SnapshotEntry(closed[k], p) for k, p in prices.items())
        return MarketSnapshot(honest.as_of, honest.entries + extra)
