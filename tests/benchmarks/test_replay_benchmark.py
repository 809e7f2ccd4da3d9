"""How long the bundled dataset takes to load and to serve a daily replay (printed, not asserted)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from markets.replay import BUNDLED_DATASET_DIR, ReplaySource, check_point_in_time, load_dataset


@pytest.mark.benchmark
def test_replay_dataset_load_and_daily_snapshots() -> None:
    started = time.perf_counter()
    dataset = load_dataset(BUNDLED_DATASET_DIR)
    loaded = time.perf_counter()
    source = ReplaySource(dataset)
    indexed = time.perf_counter()
    assert source.start is not None and source.end is not None

    days, entries, as_of = 0, 0, source.start
    snapshot_seconds = marks_seconds = 0.0
    while as_of <= source.end:
        tick = time.perf_counter()
        snapshot = source.snapshot(as_of)
        snapshot_seconds += time.perf_counter() - tick
        tick = time.perf_counter()
        # What an engine does besides: marks for every market ever seen, and settlements.
        source.latest_prices(list(dataset.markets), as_of)
        source.resolutions(as_of)
        marks_seconds += time.perf_counter() - tick
        days, entries, as_of = days + 1, entries + len(snapshot.entries), as_of + timedelta(days=1)

    tick = time.perf_counter()
    check_point_in_time(source, [source.start + timedelta(days=d) for d in range(0, days, 7)])
    checked = time.perf_counter() - tick
    print(
        f"\nreplay dataset: load {loaded - started:.3f} s, index {indexed - loaded:.3f} s; "
        f"{days} daily snapshots {snapshot_seconds * 1000 / days:.2f} ms each "
        f"(mean {entries / days:.0f} open markets); marks+resolutions for all {len(dataset.markets)} "
        f"markets {marks_seconds * 1000 / days:.2f} ms per day; "
        f"whole span {snapshot_seconds + marks_seconds:.2f} s; "
        f"point-in-time check over {len(range(0, days, 7))} weekly times {checked:.2f} s"
    )
