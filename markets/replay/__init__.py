"""Replay datasets: recorded real markets served point in time, with no network and no keys.

- ``load_dataset(dir)`` / ``ReplaySource.from_directory(dir)``: read, validate and serve a dataset.
- ``write_dataset(dir, markets=..., prices=..., resolutions=..., info=...)``: write one from
  domain objects (``arena markets record``); same format, same validation, atomic.
- ``import_forecastbench(raw, out, ...)``: build one from the raw ForecastBench layout.
- ``check_point_in_time(source, probe_times(start, end))``: the leak check for any ``MarketSource``.
The format and the timing rule are described in ``markets.replay.format`` and the README.
"""

from markets.replay.forecastbench import ImportSummary, import_forecastbench
from markets.replay.format import DatasetError, DatasetInfo, usable_from
from markets.replay.load import BUNDLED_DATASET_DIR, ReplayDataset, load_dataset
from markets.replay.point_in_time import (
    PointInTimeError,
    Violation,
    check_point_in_time,
    find_violations,
    probe_times,
)
from markets.replay.source import ReplaySource
from markets.replay.summary import DatasetSummary, summarize
from markets.replay.write import rehash_dataset, write_dataset

__all__ = [
    "BUNDLED_DATASET_DIR",
    "DatasetError",
    "DatasetInfo",
    "DatasetSummary",
    "ImportSummary",
    "PointInTimeError",
    "ReplayDataset",
    "ReplaySource",
    "Violation",
    "check_point_in_time",
    "find_violations",
    "import_forecastbench",
    "load_dataset",
    "probe_times",
    "rehash_dataset",
    "summarize",
    "usable_from",
    "write_dataset",
]
