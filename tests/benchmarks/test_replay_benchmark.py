"""How long the bundled dataset takes to load and to serve a daily replay (recorded, not asserted)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from markets.replay import BUNDLED_DATASET_DIR, ReplaySource, check_point_in_time, load_dataset
from tests.benchmarks.results import Figure, record


@pytest.mark.benchmark
def test_replay_dataset_load_and_daily_snapshots() -> None:
    started = time.perf_counter()
    dataset = load_dataset(BUNDLED_DATASET_DIR)
    loaded = time.perf_counter()
    source = ReplaySource(dataset)
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
    record(
        "replay_dataset",
        measures="the bundled dataset: load, daily snapshots, marks and resolutions, the point-in-time check",
        command="pytest tests/benchmarks/test_replay_benchmark.py -s -m benchmark",
        figures=[
            Figure("load", loaded - started, "s"),
            Figure("a daily snapshot", snapshot_seconds * 1000 / days, "ms"),
            Figure(
                f"marks and resolutions of all {len(dataset.markets)} markets, a day",
                marks_seconds * 1000 / days,
                "ms",
            ),
            Figure(f"point-in-time check, {len(range(0, days, 7))} weekly times", checked, "s"),
        ],
    )
