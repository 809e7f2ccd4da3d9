"""Figures that describe a dataset (``arena data info``): coverage, outcomes, gaps."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import pairwise
from statistics import median

from markets.replay.format import DATE_COLUMN
from markets.replay.load import ReplayDataset

GAP_THRESHOLD = timedelta(days=7)
UNRESOLVED = "unresolved"


@dataclass(frozen=True, slots=True)
class VenueCounts:
    venue: str
    markets: int
    outcomes: dict[str, int]  # resolution kind (or "unresolved") -> markets


@dataclass(frozen=True, slots=True)
class DatasetSummary:
    venues: list[VenueCounts]
    price_rows: int
    price_points: int
    markets_without_prices: int
    first_price: datetime | None  # usable-from times
    last_price: datetime | None
    first_resolution: datetime | None
    last_resolution: datetime | None
    median_points: float
    gaps_over_threshold: int
    longest_gap: timedelta
    longest_gap_market: str | None
    top_categories: list[tuple[str, int]]
    daily: bool  # prices are dated daily closes (shown as dates)


def day_of(usable: datetime) -> date:
    """The date a daily value carries, given when it became usable (the day before)."""
    return (usable - timedelta(days=1)).date()


def summarize(dataset: ReplayDataset, *, top: int = 8) -> DatasetSummary:
    venues: dict[str, Counter[str]] = {}
    for market_id, market in dataset.markets.items():
        resolution = dataset.resolutions.get(market_id)
        venues.setdefault(market.venue.value, Counter())[
            resolution.kind.value if resolution else UNRESOLVED
        ] += 1
    series = dataset.series.values()
    gaps = [(b - a, market_id) for market_id, s in dataset.series.items() for a, b in pairwise(s.times)]
    longest = max(gaps, default=(timedelta(0), None))
    resolved_times = [r.resolved_at for r in dataset.resolutions.values()]
    categories = Counter(m.category for m in dataset.markets.values() if m.category)
    return DatasetSummary(
        venues=[VenueCounts(v, sum(c.values()), dict(c)) for v, c in sorted(venues.items())],
        price_rows=dataset.price_rows,
        price_points=sum(len(s.times) for s in series),
        markets_without_prices=len(dataset.markets) - len(dataset.series),
        first_price=min((s.times[0] for s in series), default=None),
        last_price=max((s.times[-1] for s in series), default=None),
        first_resolution=min(resolved_times, default=None),
        last_resolution=max(resolved_times, default=None),
        median_points=float(median(len(s.times) for s in series)) if dataset.series else 0.0,
        gaps_over_threshold=sum(1 for gap, _ in gaps if gap > GAP_THRESHOLD),
        longest_gap=longest[0],
        longest_gap_market=longest[1],
        top_categories=categories.most_common(top),
        daily=dataset.time_column == DATE_COLUMN,
    )
