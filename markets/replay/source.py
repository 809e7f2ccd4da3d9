"""``ReplaySource``: a ``MarketSource`` that answers "as of t" from a replay dataset.

Timing (the whole point-in-time contract of replay):
- a price is usable from its ``observed_at``; a daily value dated D from D+1 00:00 UTC;
- a market is open from its first usable price until its close or its resolution, whichever
  comes first: open at t when first price time <= t < min(close_time, resolved_at) (never at
  or after either; a market without a close time trades until it resolves). A closed market
  that has not resolved is out of the snapshot but keeps its prices (``latest_prices``: marks);
- a resolution is known from its ``resolved_at`` (inclusive).
Everything is indexed once at construction (prices in columns, ``price_series``; a binary search
per market and query), so a daily snapshot costs a few milliseconds and builds objects only for
the markets it serves.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from markets.replay.load import ReplayDataset, load_dataset
from markets.replay.price_series import PriceSeries, micros
from markets.types import Market, MarketSnapshot, PriceSnapshot, Resolution, SnapshotEntry

DEFAULT_HISTORY_POINTS = 30
DEFAULT_MAX_PRICE_AGE = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class _Window:
    opens: datetime
    ends: datetime | None  # the close or the resolution, whichever is first; None: neither known
    market: Market
    market_id: str  # cached: Market.market_id is computed on every access


class ReplaySource:
    """Serve a dataset point in time.

    ``history_points``: how many recent (time, first-outcome price) points each snapshot entry
    carries. ``max_price_age``: a snapshot leaves out open markets whose latest price is older
    than this (the data has gaps; betting at a weeks-old price is not a real fill). ``None``
    keeps them. Such markets stay open and still resolve; ``latest_prices`` is not filtered.
    """

    def __init__(
        self,
        dataset: ReplayDataset,
        *,
        history_points: int = DEFAULT_HISTORY_POINTS,
        max_price_age: timedelta | None = DEFAULT_MAX_PRICE_AGE,
    ) -> None:
        if history_points < 1:
            raise ValueError(f"history_points must be >= 1, got {history_points}")
        self.dataset = dataset
        self._history_points = history_points
        self._max_price_age = max_price_age
        self._series: dict[str, PriceSeries] = dict(dataset.series)
        self._windows = sorted(
            (
                _Window(
                    s.first_time, _ends(dataset.markets[k], dataset.resolutions.get(k)), dataset.markets[k], k
                )
                for k, s in self._series.items()
            ),
            key=lambda w: (w.opens, w.market_id),
        )
        self._resolutions = sorted(dataset.resolutions.values(), key=lambda r: (r.resolved_at, r.market_id))
        self._resolution_times = [r.resolved_at for r in self._resolutions]

    @classmethod
    def from_directory(
        cls,
        path: Path | str,
        *,
        history_points: int = DEFAULT_HISTORY_POINTS,
        max_price_age: timedelta | None = DEFAULT_MAX_PRICE_AGE,
    ) -> ReplaySource:
        """Load and validate the dataset at ``path`` and serve it."""
        return cls(load_dataset(path), history_points=history_points, max_price_age=max_price_age)

    @property
    def start(self) -> datetime | None:
        """The first instant any market is open (its first usable price); None if no prices."""
        return self._windows[0].opens if self._windows else None

    @property
    def end(self) -> datetime | None:
        """The last instant anything changes: the latest resolution or price time."""
        times = [s.last_time for s in self._series.values()] + self._resolution_times[-1:]
        return max(times) if times else None

    def open_markets(self, as_of: datetime) -> list[Market]:
        return [w.market for w in self._open_windows(_utc(as_of))]

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        as_of = _utc(as_of)
        us, found = micros(as_of), {}
        for market_id in market_ids:
            series = self._series.get(market_id)
            index = series.index_at_micros(us) if series else -1
            if series and index >= 0:
                found[market_id] = series.snapshot(index)
        return found

    def resolutions(self, as_of: datetime) -> list[Resolution]:
        return self._resolutions[: bisect_right(self._resolution_times, _utc(as_of))]

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        as_of = _utc(as_of)
        us, entries = micros(as_of), []
        for window in self._open_windows(as_of):
            market_id = window.market_id
            series = self._series[market_id]
            index = series.index_at_micros(us)
            price = series.snapshot(index)
            if self._max_price_age is not None and as_of - price.observed_at > self._max_price_age:
                continue
            history = series.history(index, self._history_points)
            entries.append(SnapshotEntry(market=window.market, price=price, history=history))
        return MarketSnapshot(as_of=as_of, entries=tuple(entries))

    def _open_windows(self, as_of: datetime) -> list[_Window]:
        """Open windows at ``as_of``, by market id. Windows are sorted by opening time, so the
        scan stops at the first one that has not opened yet."""
        found = []
        for window in self._windows:
            if window.opens > as_of:
                break
            if window.ends is None or as_of < window.ends:
                found.append(window)
        found.sort(key=lambda w: w.market_id)
        return found


def _ends(market: Market, resolution: Resolution | None) -> datetime | None:
    """When trading ends: the close time or the resolution, whichever is first (None: neither)."""
    times = [t for t in (market.close_time, resolution.resolved_at if resolution else None) if t]
    return min(times, default=None)


def _utc(as_of: datetime) -> datetime:
    """Refuse naive times (their zone is a guess) and normalise to UTC so snapshot hashes agree."""
    if as_of.tzinfo is None:
        raise ValueError(f"naive datetime {as_of.isoformat()} has no time zone; use UTC")
    return as_of.astimezone(UTC)
