"""The point-in-time check: the replay source passes it, and each kind of leak is caught.

``markets.replay.check_point_in_time(source, times)`` takes any ``MarketSource``; the live
Polymarket/Manifold sources plug in the same way: ``check_point_in_time(source, probe_times(a, b))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from markets.replay import (
    BUNDLED_DATASET_DIR,
    DatasetInfo,
    PointInTimeError,
    ReplaySource,
    check_point_in_time,
    find_violations,
    probe_times,
    write_dataset,
)
from markets.types import (
    Market,
    MarketSnapshot,
    MarketSource,
    PriceSnapshot,
    Resolution,
    ResolutionKind,
    SnapshotEntry,
    Venue,
)
from tests.markets.ignores_closes import IgnoresCloses

DAY = timedelta(days=1)


@pytest.fixture(scope="module")
def bundled() -> ReplaySource:
    return ReplaySource.from_directory(BUNDLED_DATASET_DIR)


@pytest.fixture(scope="module")
def times(bundled: ReplaySource) -> list[datetime]:
    assert bundled.start is not None and bundled.end is not None
    return probe_times(bundled.start, bundled.end, count=50, seed=7)


def test_replay_source_passes(bundled: ReplaySource, times: list[datetime]) -> None:
    check_point_in_time(bundled, times)
    # Not vacuous: the times asked see many open markets and prices.
    assert sum(len(bundled.snapshot(t).entries) for t in times) > 2000


def test_replay_source_passes_at_every_resolution_instant(bundled: ReplaySource) -> None:
    edges = sorted({r.resolved_at for r in bundled.dataset.resolutions.values()})
    check_point_in_time(
        bundled, [t + d for t in edges[::5] for d in (-timedelta(microseconds=1), timedelta(0))]
    )


class Delegate:
    """A MarketSource forwarding to a real one; each leak below overrides one method."""

    def __init__(self, inner: ReplaySource) -> None:
        self.inner = inner

    def open_markets(self, as_of: datetime) -> list[Market]:
        return self.inner.open_markets(as_of)

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        return self.inner.latest_prices(market_ids, as_of)

    def resolutions(self, as_of: datetime) -> list[Resolution]:
        return self.inner.resolutions(as_of)

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        return self.inner.snapshot(as_of)


class PeeksAhead(Delegate):
    """latest_prices reads three days ahead (a forgotten as_of filter)."""

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        return self.inner.latest_prices(market_ids, as_of + 3 * DAY)


class KeepsResolvedOpen(Delegate):
    """open_markets ignores resolutions: markets stay listed after they resolved."""

    def open_markets(self, as_of: datetime) -> list[Market]:
        resolved = {r.market_id for r in self.inner.resolutions(as_of)}
        listed = {m.market_id for m in self.inner.open_markets(as_of)}
        started = {k for k, s in self.inner.dataset.series.items() if s.times[0] <= as_of}
        markets = self.inner.dataset.markets
        return [markets[k] for k in sorted(listed | (started & resolved))]


class ResolvesEarly(Delegate):
    """resolutions reads two days ahead."""

    def resolutions(self, as_of: datetime) -> list[Resolution]:
        return self.inner.resolutions(as_of + 2 * DAY)


class BackdatesResolutions(Delegate):
    """Resolutions are stamped a day before they become known."""

    def resolutions(self, as_of: datetime) -> list[Resolution]:
        return [replace(r, resolved_at=r.resolved_at - DAY) for r in self.inner.resolutions(as_of)]


class BackdatesPrices(Delegate):
    """Prices are served on time but stamped a day early (the date instead of its usable time)."""

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        found = self.inner.latest_prices(market_ids, as_of)
        return {k: replace(p, observed_at=p.observed_at - DAY) for k, p in found.items()}


class FutureHistory(Delegate):
    """Snapshot histories include the next point after as_of."""

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        snapshot = self.inner.snapshot(as_of)
        entries = []
        for entry in snapshot.entries:
            series = self.inner.dataset.series[entry.market.market_id]
            later = [(s.observed_at, s.prices["YES"]) for s in series.snapshots if s.observed_at > as_of][:1]
            entries.append(replace(entry, history=entry.history + tuple(later)))
        return MarketSnapshot(as_of=snapshot.as_of, entries=tuple(entries))


class SnapshotOfResolved(Delegate):
    """The snapshot lists markets that resolved within the last week."""

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        snapshot = self.inner.snapshot(as_of)
        recent = [r for r in self.inner.resolutions(as_of) if as_of - r.resolved_at < 7 * DAY]
        prices = self.inner.latest_prices([r.market_id for r in recent], as_of)
        extra = tuple(
            SnapshotEntry(self.inner.dataset.markets[k], p) for k, p in prices.items() if k in prices
        )
        return MarketSnapshot(as_of=snapshot.as_of, entries=snapshot.entries + extra)


@pytest.mark.parametrize(
    ("leaky", "symptom"),
    [
        (PeeksAhead, "after as_of"),
        (KeepsResolvedOpen, "open but resolved at"),
        (ResolvesEarly, "is after as_of"),
        (BackdatesResolutions, "the stamp predates the knowledge"),
        (BackdatesPrices, "that stamp predates when it became known"),
        (FutureHistory, "snapshot.history"),
        (SnapshotOfResolved, "in the snapshot but not open"),
        (IgnoresCloses, "offered but closed at"),
    ],
)
def test_each_leak_is_caught(
    bundled: ReplaySource, times: list[datetime], leaky: type[Delegate | IgnoresCloses], symptom: str
) -> None:
    source: MarketSource = leaky(bundled)
    with pytest.raises(PointInTimeError) as caught:
        check_point_in_time(source, times)
    assert any(symptom in str(v) for v in caught.value.violations), str(caught.value)


class RestatesDailyRow(Delegate):
    """A price table keyed by day and updated in place: the stamp says 00:00, the value is the
    latest of that day so far."""

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        found = self.inner.latest_prices(market_ids, as_of)
        midnight = as_of.replace(hour=0, minute=0, second=0, microsecond=0)
        return {
            k: replace(p, observed_at=max(midnight, min(p.observed_at, midnight))) for k, p in found.items()
        }


def test_restated_values_are_caught_on_intraday_data(tmp_path: Path) -> None:
    market = Market(venue=Venue.POLYMARKET, venue_id="0xintraday", question="Intraday?")
    base = datetime(2025, 5, 1, tzinfo=UTC)
    prices = [
        PriceSnapshot(
            market.market_id, {"YES": Decimal(v), "NO": 1 - Decimal(v)}, base + timedelta(hours=h), "t"
        )
        for h, v in [(1, "0.3"), (9, "0.4"), (15, "0.5"), (30, "0.6")]
    ]
    info = DatasetInfo(name="intraday", version="1", source="t", license="CC0", created_with="t")
    resolution = Resolution.binary(market.market_id, ResolutionKind.YES, base + timedelta(days=3))
    write_dataset(tmp_path / "ds", markets=[market], prices=prices, resolutions=[resolution], info=info)
    honest = ReplaySource.from_directory(tmp_path / "ds")
    asked = [base + timedelta(hours=h) for h in (2, 10, 16, 31, 40)]
    check_point_in_time(honest, asked)
    violations = find_violations(RestatesDailyRow(honest), asked)
    assert any("it changed after its stamp" in v.detail for v in violations)


def test_no_times_means_no_findings(bundled: ReplaySource) -> None:
    assert find_violations(bundled, []) == []
