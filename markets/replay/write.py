"""Write replay datasets atomically: everything goes to a temporary sibling directory, is
validated by the same loader that reads datasets, and only then is renamed into place. A failed
write leaves no directory and no partial files behind."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path

import polars as pl

from markets.placement import staged_folder
from markets.replay.format import (
    DATASET_FILE,
    MARKET_COLUMNS,
    MARKETS_FILE,
    OBSERVED_AT_COLUMN,
    PRICES_FILE,
    DatasetError,
    DatasetInfo,
    dataset_files,
    format_utc,
    json_text,
    listed_files,
    read_info,
    write_info,
)
from markets.replay.load import ReplayDataset, read_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind

RECORDED_PRICE_COLUMNS = ("market_id", OBSERVED_AT_COLUMN, "outcome", "price")


def write_dataset(
    out_dir: Path | str,
    *,
    markets: Sequence[Market],
    prices: Sequence[PriceSnapshot],
    resolutions: Sequence[Resolution],
    info: DatasetInfo,
    overwrite: bool = False,
) -> ReplayDataset:
    """Write domain objects as a dataset (used by ``arena markets record``).

    Prices are stored per outcome with their ``observed_at``; bids, asks, ``source`` and
    ``raw_ref`` are not kept, nor ``Market.resolution_time`` (replayed, it would tell open
    markets when they resolve). A resolution whose payouts its kind cannot reproduce is refused.
    """
    by_market = _index_resolutions(resolutions, {m.market_id for m in markets})
    market_rows = [
        _market_row(m, by_market.get(m.market_id)) for m in sorted(markets, key=lambda m: m.market_id)
    ]
    price_rows = [
        {
            "market_id": p.market_id,
            OBSERVED_AT_COLUMN: format_utc(p.observed_at),
            "outcome": o,
            "price": _text(v),
        }
        for p in sorted(prices, key=lambda p: (p.market_id, p.observed_at))
        for o, v in sorted(p.prices.items())
    ]
    return write_frames(
        Path(out_dir),
        _frame(market_rows, MARKET_COLUMNS),
        _frame(price_rows, RECORDED_PRICE_COLUMNS),
        info,
        overwrite=overwrite,
    )


def _index_resolutions(resolutions: Sequence[Resolution], known: set[str]) -> dict[str, Resolution]:
    by_market: dict[str, Resolution] = {}
    for resolution in resolutions:
        if resolution.market_id in by_market:
            raise DatasetError(f"two resolutions for market {resolution.market_id}")
        if resolution.market_id not in known:
            raise DatasetError(
                f"resolution for unknown market {resolution.market_id} (not among the markets written)"
            )
        by_market[resolution.market_id] = resolution
    return by_market


def write_frames(
    out_dir: Path,
    markets: pl.DataFrame,
    prices: pl.DataFrame,
    info: DatasetInfo,
    *,
    extra_files: Mapping[str, bytes] | None = None,
    overwrite: bool = False,
) -> ReplayDataset:
    """Write text frames as ``markets.csv``/``prices.csv`` plus ``dataset.json`` and any extra
    files (license, attribution), validate the result, then move it to ``out_dir``.

    ``overwrite`` replaces only a dataset the arena wrote there before, holding nothing else
    (``markets.placement``); anything else at ``out_dir`` raises ``PlacementRefused``."""
    with staged_folder(out_dir, "replay dataset", replace=overwrite, record=dataset_files) as staging:
        _write_csv(markets, staging / MARKETS_FILE)
        _write_csv(prices, staging / PRICES_FILE)
        for relative, content in (extra_files or {}).items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        write_info(staging, info, files=[MARKETS_FILE, PRICES_FILE, DATASET_FILE, *(extra_files or {})])
        dataset = read_dataset(staging, label=out_dir)
    return dataset


def rehash_dataset(path: Path | str) -> ReplayDataset:
    """Validate a dataset whose CSV files were edited by hand and record their new content hash."""
    directory = Path(path)
    read_dataset(directory, verify_hash=False)
    info, _ = read_info(directory, directory)
    payload = json.loads((directory / DATASET_FILE).read_text(encoding="utf-8"))  # read_info parsed it
    write_info(directory, info, files=listed_files(payload))
    return read_dataset(directory)


def _market_row(market: Market, resolution: Resolution | None) -> dict[str, str]:
    kind, winner, resolved_at = "", "", ""
    if resolution is not None:
        kind, winner = _stored_resolution(market, resolution)
        resolved_at = format_utc(resolution.resolved_at)
    return {
        "venue": market.venue.value,
        "venue_id": market.venue_id,
        "question": market.question,
        "outcomes": json_text(list(market.outcomes)),
        "resolution": kind,
        "resolved_at": resolved_at,
        "description": market.description,
        "open_time": format_utc(market.open_time) if market.open_time else "",
        "close_time": format_utc(market.close_time) if market.close_time else "",
        "category": market.category or "",
        "url": market.url or "",
        "volume": _text(market.volume) if market.volume is not None else "",
        "liquidity": _text(market.liquidity) if market.liquidity is not None else "",
        "token_ids": json_text(dict(market.token_ids)) if market.token_ids else "",
        "winner": winner,
    }


def _stored_resolution(market: Market, resolution: Resolution) -> tuple[str, str]:
    """(resolution, winner) cells; refused when reading them back would change the payouts."""
    winner = ""
    if resolution.kind is ResolutionKind.OUTCOME:
        winners = [o for o, p in resolution.payouts.items() if p == 1]
        winner = winners[0] if len(winners) == 1 else ""
        if winner not in market.outcomes:
            raise DatasetError(f"resolution of {market.market_id}: OUTCOME needs exactly one winning outcome")
        rebuilt = Resolution.winner(market.market_id, market.outcomes, winner, resolution.resolved_at)
    elif resolution.kind is ResolutionKind.VOID or market.is_binary:
        rebuilt = Resolution.binary(market.market_id, resolution.kind, resolution.resolved_at)
    else:
        raise DatasetError(f"resolution of {market.market_id}: {resolution.kind} needs a YES/NO market")
    if dict(rebuilt.payouts) != dict(resolution.payouts):
        raise DatasetError(
            f"resolution of {market.market_id}: payouts {dict(resolution.payouts)} cannot be stored "
            f"as {resolution.kind} (which pays {dict(rebuilt.payouts)})"
        )
    return resolution.kind.value, winner


def _text(value: Decimal) -> str:
    """Plain decimal notation (never 1E-7), exact."""
    return format(value, "f")


def _write_csv(frame: pl.DataFrame, path: Path) -> None:
    """Empty cells are written bare (``,,``) rather than quoted (``,"",``), for readable diffs."""
    frame.with_columns(pl.col(pl.String).replace("", None)).write_csv(path)


def _frame(rows: list[dict[str, str]], columns: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=dict.fromkeys(columns, pl.String))
