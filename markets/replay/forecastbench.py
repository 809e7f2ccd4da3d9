"""Convert the raw ForecastBench layout (``markets.jsonl`` + ``daily_values.csv``) into a dataset.

Kept: Polymarket and Manifold markets that resolved YES or NO, have question text and at least
``min_points`` daily values. Unresolved markets are left out: a replay can never settle them,
so bets on them would stay open forever and score nothing. The attribution (``SOURCE.md``, with
a section saying what this conversion changed) and the CC BY-SA license travel with the data.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from markets.replay.columns import (
    ROW,
    check_unique,
    first_row,
    parse_dates,
    parse_day,
    parse_probabilities,
    read_table,
    require_cells,
)
from markets.replay.format import (
    MARKET_COLUMNS,
    DatasetError,
    DatasetInfo,
    check_columns,
    format_utc,
    json_text,
    parse_utc,
    row_error,
    start_of_day,
    usable_from,
)
from markets.replay.load import ReplayDataset
from markets.replay.write import write_frames
from markets.types import BINARY_OUTCOMES, Venue

RAW_MARKETS = "markets.jsonl"
RAW_VALUES = "daily_values.csv"
RAW_SOURCE = "SOURCE.md"
RAW_ORIG = "orig"
RAW_LICENSE = "orig/LICENSE"
VALUE_COLUMNS = ("source", "id", "date", "value")
LICENSE = "CC BY-SA 4.0"
_FIELDS: dict[str, tuple[type, ...]] = {
    "source": (str,),
    "id": (str,),
    "question": (str, type(None)),
    "background": (str, type(None)),
    "url": (str, type(None)),
    "market_info_open_datetime": (str, type(None)),
    "market_info_close_datetime": (str, type(None)),
    "resolved": (bool,),
    "resolution_date": (str, type(None)),
    "resolved_to": (int, float, type(None)),
}


@dataclass(frozen=True, slots=True)
class ImportSummary:
    dataset: ReplayDataset
    considered: int
    skipped: dict[str, int]  # reason -> markets left out


@dataclass(frozen=True, slots=True)
class _Selection:
    """The raw data, checked, reduced to the kept markets and shaped as dataset tables."""

    markets: pl.DataFrame
    prices: pl.DataFrame
    considered: int
    skipped: dict[str, int]


def import_forecastbench(
    raw_dir: Path | str,
    out_dir: Path | str,
    *,
    created_with: str,
    min_points: int = 10,
    name: str = "forecastbench",
    version: str | None = None,
    overwrite: bool = False,
) -> ImportSummary:
    """Build a dataset at ``out_dir``; ``version`` defaults to the last price date kept."""
    raw = Path(raw_dir)
    for required in (RAW_MARKETS, RAW_VALUES, RAW_SOURCE, RAW_LICENSE):
        if not (raw / required).is_file():
            raise DatasetError(
                f"{raw}: missing {required} (expected the raw ForecastBench layout, see SOURCE.md)"
            )
    _refuse_links(raw)
    try:
        selection = _select(raw, min_points)
    except DatasetError as exc:
        raise DatasetError(f"{raw}/{exc}") from exc
    kept = selection.markets.height
    if kept == 0:
        reasons = "; ".join(f"{reason}: {count}" for reason, count in sorted(selection.skipped.items()))
        raise DatasetError(
            f"{raw}: no market to keep of {selection.considered} in {RAW_MARKETS} ({reasons or 'none'})"
        )
    info = DatasetInfo(
        name=name,
        version=version or str(selection.prices["date"].max() or "empty"),
        source="ForecastBench market questions (forecastingresearch/forecastbench-datasets): "
        "Polymarket and Manifold; see SOURCE.md",
        license=LICENSE,
        created_with=created_with,
        description=f"{kept} resolved binary markets with daily prices (the close of each date, "
        "usable from 00:00 UTC the next day).",
    )
    notes = _conversion_notes(created_with, selection.considered, kept, selection.skipped, min_points)
    extra = _attribution_files(raw, notes)
    dataset = write_frames(
        Path(out_dir), selection.markets, selection.prices, info, extra_files=extra, overwrite=overwrite
    )
    return ImportSummary(dataset=dataset, considered=selection.considered, skipped=selection.skipped)


def _select(raw: Path, min_points: int) -> _Selection:
    records = _read_records(raw / RAW_MARKETS)
    values = _read_values(raw / RAW_VALUES)
    _check_known_markets(values, records)
    counts = {(s, i): n for s, i, n in values.group_by("source", "id").len().iter_rows()}
    reasons = {
        key: _skip_reason(record, counts.get(key, 0), min_points) for key, (_, record) in records.items()
    }
    kept = sorted(key for key, reason in reasons.items() if reason is None)
    markets = pl.DataFrame(
        [_market_row(*records[key]) for key in kept],
        schema=dict.fromkeys(MARKET_COLUMNS, pl.String),
    )
    rows = _kept_values(values, kept)
    _check_resolved_after_first_value(records, rows)
    return _Selection(
        markets=markets,
        prices=_price_table(rows),
        considered=len(records),
        skipped=dict(Counter(r for r in reasons.values() if r is not None)),
    )


def _read_records(path: Path) -> dict[tuple[str, str], tuple[int, dict[str, Any]]]:
    """Every JSON line, checked field by field, keyed by (source, id)."""
    records: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for line_no, raw_line in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw_line.strip():
            continue
        record = _parse_record(line_no, raw_line)
        key = (record["source"], record["id"])
        if key in records:
            raise _line_error(line_no, "id", f"duplicate of line {records[key][0]} ({key[0]} {key[1]})")
        records[key] = (line_no, record)
    return records


def _parse_record(line_no: int, raw_line: bytes) -> dict[str, Any]:
    """One line of ``markets.jsonl``, its fields' types, texts and ``resolved_to`` checked."""
    try:
        record = json.loads(raw_line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{RAW_MARKETS} line {line_no}: not UTF-8 text ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{RAW_MARKETS} line {line_no}: not valid JSON ({exc.msg})") from exc
    except RecursionError as exc:
        raise DatasetError(f"{RAW_MARKETS} line {line_no}: JSON nested too deeply") from exc
    if not isinstance(record, dict):
        raise DatasetError(f"{RAW_MARKETS} line {line_no}: expected a JSON object")
    for name, types in _FIELDS.items():
        if name not in record:
            raise _line_error(line_no, name, "is missing")
        value = record[name]
        if not isinstance(value, types) or (name == "resolved_to" and isinstance(value, bool)):
            raise _line_error(line_no, name, f"{value!r} has the wrong type")
        if isinstance(value, str) and not _is_text(value):
            raise _line_error(line_no, name, "holds a NUL character or a lone surrogate, which is not text")
    resolved_to = record["resolved_to"]
    if resolved_to is not None and not (math.isfinite(resolved_to) and 0 <= resolved_to <= 1):
        raise _line_error(line_no, "resolved_to", f"{resolved_to!r} is not a value in [0, 1]")
    return record


def _is_text(value: str) -> bool:
    """No NUL (no database text holds one) and no lone surrogate (``\\ud800`` without its pair)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


def _read_values(path: Path) -> pl.DataFrame:
    values = read_table(path, RAW_VALUES)
    check_columns(RAW_VALUES, [c for c in values.columns if c != ROW], VALUE_COLUMNS, VALUE_COLUMNS)
    require_cells(values, VALUE_COLUMNS, RAW_VALUES)
    return values


def _check_known_markets(values: pl.DataFrame, records: Mapping[tuple[str, str], object]) -> None:
    """Every daily value belongs to a market of ``markets.jsonl``: a stray one means the two files
    come from different exports (or an id was mistyped), and dropping it silently would hide that."""
    known = pl.DataFrame(list(records), schema={"source": pl.String, "id": pl.String}, orient="row")
    hit = first_row(values.join(known, on=["source", "id"], how="anti"), pl.lit(True))
    if hit is not None:
        problem = f"no market ({hit['source']}, {hit['id']!r}) in {RAW_MARKETS}"
        raise row_error(RAW_VALUES, int(str(hit[ROW])), "id", problem)


def _skip_reason(record: Mapping[str, Any], points: int, min_points: int) -> str | None:
    """Why a market is left out, or None to keep it (first reason that applies)."""
    if record["source"] not in {v.value for v in Venue}:
        return "not a Polymarket/Manifold market"
    if not record["resolved"]:
        return "unresolved (a replay could never settle it)"
    if not (record["question"] or "").strip():
        return "no question text"
    if record["resolved_to"] not in (0, 1):
        return "not resolved to exactly YES or NO"
    if points < min_points:
        return f"fewer than {min_points} daily values"
    return None


def _kept_values(values: pl.DataFrame, kept: list[tuple[str, str]]) -> pl.DataFrame:
    """The kept markets' values, checked (dates, prices, duplicates) with their raw row numbers."""
    wanted = pl.DataFrame(kept, schema={"source": pl.String, "id": pl.String}, orient="row")
    rows = values.join(wanted, on=["source", "id"], how="semi")
    parse_dates(rows, "date", RAW_VALUES)
    parse_probabilities(rows, "value", RAW_VALUES)
    check_unique(rows, ["source", "id", "date"], RAW_VALUES)
    return rows


def _check_resolved_after_first_value(
    records: Mapping[tuple[str, str], tuple[int, Mapping[str, Any]]], rows: pl.DataFrame
) -> None:
    """A market cannot resolve before its first value is usable (a replay would never open it);
    named here, in the raw files, rather than later in the generated ``markets.csv``."""
    firsts = rows.sort("date", ROW).group_by("source", "id", maintain_order=True).first()
    for source, market_id, day, row in firsts.select("source", "id", "date", ROW).sort(ROW).iter_rows():
        line_no, record = records[(source, market_id)]
        resolution_date = record["resolution_date"]
        usable = usable_from(parse_day(day))
        if start_of_day(parse_day(resolution_date)) < usable:
            raise _line_error(
                line_no,
                "resolution_date",
                f"{resolution_date} is before the market's first daily value is usable "
                f"({RAW_VALUES} row {row}, dated {day}, usable from {format_utc(usable)})",
            )


def _price_table(rows: pl.DataFrame) -> pl.DataFrame:
    """Checked raw values shaped as ``prices.csv``."""
    return rows.select(
        market_id=pl.concat_str("source", pl.lit(":"), "id"),
        date=pl.col("date"),
        price=pl.col("value").str.strip_chars(),
    ).sort("market_id", "date")


def _market_row(line_no: int, record: Mapping[str, Any]) -> dict[str, str]:
    resolution_date = record["resolution_date"]
    if resolution_date is None:
        raise _line_error(line_no, "resolution_date", "is empty but the market is resolved")
    try:
        resolved_at = start_of_day(parse_day(resolution_date))
    except ValueError as exc:
        raise _line_error(
            line_no, "resolution_date", f"{resolution_date!r} is not a date (YYYY-MM-DD)"
        ) from exc
    return {
        "venue": record["source"],
        "venue_id": record["id"],
        "question": record["question"].strip(),
        "outcomes": json_text(list(BINARY_OUTCOMES)),
        "resolution": "YES" if record["resolved_to"] == 1 else "NO",
        "winner": "",
        "resolved_at": format_utc(resolved_at),
        "open_time": _time_cell(line_no, record, "market_info_open_datetime"),
        "close_time": _time_cell(line_no, record, "market_info_close_datetime"),
        "category": "",
        "volume": "",
        "liquidity": "",
        "url": record["url"] or "",
        "token_ids": "",
        "description": (record["background"] or "").strip(),
    }


def _time_cell(line_no: int, record: Mapping[str, Any], field: str) -> str:
    """ISO 8601 UTC, or empty when unknown ("N/A"). A bare date (Polymarket ``startDateIso``)
    is taken as 00:00 UTC of that date."""
    text = (record[field] or "").strip()
    if text in ("", "N/A"):
        return ""
    try:
        return format_utc(start_of_day(parse_day(text)) if len(text) == 10 else parse_utc(text))
    except ValueError as exc:
        raise _line_error(
            line_no, field, f"{text!r} is not an ISO 8601 time with a zone, a date or N/A ({exc})"
        ) from exc


def _line_error(line_no: int, field: str, problem: str) -> DatasetError:
    return DatasetError(f"{RAW_MARKETS} line {line_no}, field '{field}': {problem}")


def _refuse_links(raw: Path) -> None:
    """Every file read, and every file of orig/ (copied into the dataset), must be itself, not a
    symbolic link: a link (``orig/LICENSE -> /etc/shadow``) would publish whatever it points at."""
    used = [raw / name for name in (RAW_MARKETS, RAW_VALUES, RAW_SOURCE, RAW_ORIG)]
    for path in [*used, *sorted((raw / RAW_ORIG).iterdir())]:
        if path.is_symlink():
            raise DatasetError(f"{path} is a symbolic link; put the file itself in the raw folder")


def _attribution_files(raw: Path, notes: str) -> dict[str, bytes]:
    """SOURCE.md (with what this conversion changed appended), the license at the top level, and
    the verbatim originals under orig/, as CC BY-SA 4.0 requires."""
    files = {
        "SOURCE.md": (raw / RAW_SOURCE).read_bytes().rstrip() + b"\n\n" + notes.encode(),
        "LICENSE": (raw / RAW_LICENSE).read_bytes(),
    }
    for path in sorted((raw / RAW_ORIG).iterdir()):
        if path.is_file():
            files[f"{RAW_ORIG}/{path.name}"] = path.read_bytes()
    return files


def _conversion_notes(
    created_with: str, considered: int, kept: int, skipped: Mapping[str, int], min_points: int
) -> str:
    reasons = "\n".join(f"  - {reason}: {count}" for reason, count in sorted(skipped.items()))
    return f"""## Further modified for Bettor Arena

This directory is a Bettor Arena replay dataset made from the files described above with
`{created_with}`. `markets.jsonl` and `daily_values.csv` themselves are not included; their
content was changed as follows (the result remains under CC BY-SA 4.0, with the attribution above):

- Selection: {kept} of {considered} markets kept — resolved YES or NO, with question text and at
  least {min_points} daily values. Left out:
{reasons}
- Restructured into `markets.csv` (one row per market), `prices.csv` (one row per market and
  date) and `dataset.json` (provenance, license, content hash). Renamed: `source` → `venue`,
  `id` → `venue_id`, `background` → `description`, `value` → `price` (the YES price, its decimal
  text kept exactly). Outcomes are `["YES","NO"]`.
- `resolved_to` 1.0 / 0.0 became `resolution` YES / NO; `resolution_date` D became
  `resolved_at` D 00:00 UTC (the market counts as resolved from the start of that date).
- `market_info_open_datetime` / `market_info_close_datetime` became `open_time` / `close_time`
  in ISO 8601 UTC (a bare date is 00:00 UTC of that date; "N/A" is left empty).
- Dropped: `resolution_criteria`, `question_sets`, `freeze_values`, `resolved`,
  `n_daily_values`, `first_date`, `last_date`.
- `LICENSE` is a copy of `orig/LICENSE`.

Replay timing: a price dated D is the close of day D and is used from D+1 00:00 UTC.
"""
