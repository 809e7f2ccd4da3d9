"""Load and fully validate a replay dataset directory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from markets.replay.columns import read_table
from markets.replay.format import (
    DATASET_FILE,
    MARKETS_FILE,
    PRICES_FILE,
    DatasetError,
    DatasetInfo,
    format_utc,
    hash_of,
    read_data_files,
    read_info,
    row_error,
)
from markets.replay.markets_table import MarketTable, parse_markets
from markets.replay.price_series import PriceSeries
from markets.replay.prices_table import parse_prices
from markets.types import Market, Resolution

# The bundled ForecastBench dataset, for source checkouts and editable installs.
BUNDLED_DATASET_DIR = Path(__file__).resolve().parents[2] / "data" / "forecastbench"


@dataclass(frozen=True, slots=True)
class ReplayDataset:
    """A validated dataset in memory. Markets are ordered by market id."""

    path: Path
    info: DatasetInfo
    content_hash: str
    markets: Mapping[str, Market]
    resolutions: Mapping[str, Resolution]
    series: Mapping[str, PriceSeries]
    price_rows: int
    time_column: str  # "date" (daily closes) or "observed_at"


def source_label(name: str) -> str:
    """The ``source`` stamped on every price and resolution served from a dataset."""
    return f"replay:{name}"


def load_dataset(path: Path | str) -> ReplayDataset:
    """Load ``path``; raises ``DatasetError`` naming the file, row and field of the first problem."""
    return read_dataset(Path(path))


def read_dataset(directory: Path, *, label: Path | None = None, verify_hash: bool = True) -> ReplayDataset:
    """Load ``directory``; errors name ``label`` (the final path when validating a temporary copy).
    ``verify_hash=False`` is for re-hashing a dataset edited by hand."""
    label = label or directory
    _check_layout(directory, label)
    info, recorded_hash = read_info(directory, label)
    files = read_data_files(directory)
    actual_hash = hash_of(files)
    if verify_hash and actual_hash != recorded_hash:
        raise DatasetError(
            f"{label / DATASET_FILE}: content_hash {recorded_hash} does not match the data files "
            f"({actual_hash}); they changed after dataset.json was written — rebuild the dataset, "
            f"or run `arena data rehash {label}` if the edit was deliberate"
        )
    source = source_label(info.name)
    try:
        # Each file's bytes are let go once parsed (``pop``): the prices' text is the largest
        # thing a load holds, and keeping it while the series are sorted raised the peak.
        markets_frame = read_table(directory / MARKETS_FILE, MARKETS_FILE, files.pop(MARKETS_FILE))
        table = parse_markets(markets_frame, source)
        prices_frame = read_table(directory / PRICES_FILE, PRICES_FILE, files.pop(PRICES_FILE))
        price_rows = prices_frame.height
        series, time_column = parse_prices(prices_frame, table.markets, source)
        _check_resolved_after_first_price(table, series)
    except DatasetError as exc:
        raise DatasetError(f"{label}/{exc}") from exc
    order = sorted(table.markets)
    return ReplayDataset(
        path=label,
        info=info,
        content_hash=actual_hash,
        markets={k: table.markets[k] for k in order},
        resolutions={k: table.resolutions[k] for k in order if k in table.resolutions},
        series={k: series[k] for k in order if k in series},
        price_rows=price_rows,
        time_column=time_column,
    )


def _check_resolved_after_first_price(table: MarketTable, series: Mapping[str, PriceSeries]) -> None:
    for market_id, resolution in table.resolutions.items():
        prices = series.get(market_id)
        if prices is not None and resolution.resolved_at < prices.first_time:
            raise row_error(
                MARKETS_FILE,
                table.rows[market_id],
                "resolved_at",
                f"{format_utc(resolution.resolved_at)} is before the market's first price "
                f"({PRICES_FILE} row {prices.first_row}, usable from {format_utc(prices.first_time)})",
            )


def _check_layout(directory: Path, label: Path) -> None:
    if not directory.is_dir():
        raise DatasetError(f"{label}: not a directory (expected a replay dataset directory)")
    missing = [n for n in (DATASET_FILE, MARKETS_FILE, PRICES_FILE) if not (directory / n).is_file()]
    if missing:
        raise DatasetError(
            f"{label} is not a replay dataset: missing {', '.join(missing)} (a dataset holds "
            f"{DATASET_FILE}, {MARKETS_FILE} and {PRICES_FILE}; build one with "
            "`arena data import-forecastbench RAW_DIR --out DIR`)"
        )
