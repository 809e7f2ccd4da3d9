"""The replay dataset format: file names, columns, ``dataset.json`` and the timing rule.

A dataset is a directory holding ``dataset.json`` (what it is, where it came from, its
license, a content hash), ``markets.csv`` (one row per market) and ``prices.csv`` (one row per
market, time and outcome). CSV rather than parquet because the files are small, reviewable in a
diff, readable without tools, and keep prices as the exact decimal text the source published
(parquet would store floats unless every writer agreed on a decimal type).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

FORMAT_NAME = "bettor-arena-replay"
FORMAT_VERSION = 1

DATASET_FILE = "dataset.json"
MARKETS_FILE = "markets.csv"
PRICES_FILE = "prices.csv"
HASHED_FILES = (MARKETS_FILE, PRICES_FILE)

MARKET_REQUIRED = ("venue", "venue_id", "question", "outcomes", "resolution", "resolved_at")
# Every column, in the order writers use (long free text last, so rows stay scannable).
MARKET_COLUMNS = (
    "venue",
    "venue_id",
    "question",
    "outcomes",
    "resolution",
    "winner",
    "resolved_at",
    "open_time",
    "close_time",
    "category",
    "volume",
    "liquidity",
    "url",
    "token_ids",
    "description",
)

# prices.csv has ``market_id`` and ``price``, exactly one time column, and optionally ``outcome``.
DATE_COLUMN = "date"
OBSERVED_AT_COLUMN = "observed_at"
PRICE_COLUMNS = ("market_id", DATE_COLUMN, OBSERVED_AT_COLUMN, "outcome", "price")

PRICE_SPAN = (date(1970, 1, 1), date(2200, 1, 1))
"""Prices are dated within [start, end): a replay runs from its first price to its last, so one
row dated 0001-01-01 would make a cohort of two thousand years (and 9999-12-31 cannot even be
used the next day). An error names the row."""

_INFO_FIELDS = ("name", "version", "source", "license", "created_with")


class DatasetError(ValueError):
    """A dataset (or raw input) that cannot be used, with the file, row and field at fault."""


def row_error(file: str, row: int, field: str, problem: str) -> DatasetError:
    """One-line error for a data row; ``row`` counts data rows from 1 (the header is not a row)."""
    return DatasetError(f"{file} row {row}, field '{field}': {problem}")


class OutsideSpan(ValueError):
    """A well-formed time outside the span allowed for it (``PRICE_SPAN``, or the years 1-9999)."""


def in_price_span(day: date) -> None:
    """Raise ``OutsideSpan`` unless a price dated ``day`` lies in ``PRICE_SPAN``."""
    start, end = PRICE_SPAN
    if not start <= day < end:
        raise OutsideSpan(f"outside {start} … {end - timedelta(days=1)}, the span a price may have")


def start_of_day(day: date) -> datetime:
    """00:00 UTC of ``day``."""
    return datetime.combine(day, time(0), tzinfo=UTC)


def usable_from(day: date) -> datetime:
    """When a daily value dated ``day`` may be used: the value is the close of ``day``, so it is
    only known once the day is over, at 00:00 UTC of the next day."""
    return start_of_day(day + timedelta(days=1))


def parse_utc(text: str) -> datetime:
    """An ISO 8601 timestamp that states its zone, as aware UTC. A bare time is refused: its zone
    would be a guess, and a guessed zone shifts what counts as known."""
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError("no time zone")
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # 0001-01-01T00:00:00+05:00 is before year 1 in UTC
        raise OutsideSpan("outside the years 1-9999 in UTC") from exc


def format_utc(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    """Provenance written to ``dataset.json``: enough to cite, license and rebuild the data."""

    name: str
    version: str
    source: str
    license: str
    created_with: str
    description: str = ""


def content_hash(directory: Path) -> str:
    """SHA-256 over the data files, so a cohort can record exactly which data it replayed."""
    return hash_of(read_data_files(directory))


def read_data_files(directory: Path) -> dict[str, bytes]:
    """The hashed data files' bytes, by name: a loader parses the very bytes it hashed (one read
    each, and no edit can slip in between the hash and the parse)."""
    return {name: (directory / name).read_bytes() for name in HASHED_FILES}


def hash_of(files: Mapping[str, bytes]) -> str:
    """``content_hash`` of data files already read (``read_data_files``)."""
    digest = hashlib.sha256()
    for name in HASHED_FILES:
        digest.update(name.encode() + b"\0")
        digest.update(files[name])
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()}"


def write_info(directory: Path, info: DatasetInfo, files: Collection[str] = ()) -> None:
    """Write ``dataset.json`` with the hash of the data files already in ``directory``; through a
    temporary file and a rename, so a reader never sees half a file. ``files``: every file the
    writer put in the folder (``dataset_files``), recorded so a later ``--force`` knows them."""
    payload: dict[str, object] = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **asdict(info)}
    payload["content_hash"] = content_hash(directory)
    if files:
        payload["files"] = sorted(files)
    staging = directory / f".{DATASET_FILE}.tmp"
    try:
        staging.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(staging, directory / DATASET_FILE)
    finally:
        staging.unlink(missing_ok=True)  # gone once renamed; a failed write leaves no partial file


def read_info(directory: Path, label: Path) -> tuple[DatasetInfo, str]:
    """Read and check ``dataset.json``; returns the info and the recorded content hash."""
    where = f"{label / DATASET_FILE}"
    try:
        payload = json.loads((directory / DATASET_FILE).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{where}: not UTF-8 text ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(payload, dict):
        raise DatasetError(f"{where}: expected a JSON object")
    if payload.get("format") != FORMAT_NAME or payload.get("format_version") != FORMAT_VERSION:
        raise DatasetError(
            f"{where}: expected format {FORMAT_NAME!r} version {FORMAT_VERSION}, "
            f"found {payload.get('format')!r} version {payload.get('format_version')!r}"
        )
    for key in (*_INFO_FIELDS, "content_hash"):
        if not isinstance(payload.get(key), str) or not payload[key]:
            raise DatasetError(f"{where}: field '{key}' is missing or empty (expected a string)")
    description = payload.get("description", "")
    info = DatasetInfo(**{k: payload[k] for k in _INFO_FIELDS}, description=str(description))
    return info, str(payload["content_hash"])


def dataset_files(directory: Path) -> frozenset[str] | None:
    """The files the arena wrote in a dataset folder, by its ``dataset.json``: those it lists,
    or (a dataset written before the list was kept) the three of the format; None when the
    folder holds no dataset.json of this format."""
    try:
        payload = json.loads((directory / DATASET_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_NAME:
        return None
    return listed_files(payload) or frozenset({DATASET_FILE, *HASHED_FILES})


def listed_files(payload: Mapping[str, object]) -> frozenset[str]:
    """The ``files`` list of a ``dataset.json`` document (empty when it keeps none)."""
    listed = payload.get("files")
    if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
        return frozenset()
    return frozenset(listed) | {DATASET_FILE}


def check_columns(file: str, present: list[str], required: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    """Missing required columns and unknown columns (usually typos) are errors, named."""
    missing = [c for c in required if c not in present]
    if missing:
        raise DatasetError(f"{file}: missing column(s) {', '.join(repr(c) for c in missing)}")
    unknown = [c for c in present if c not in allowed]
    if unknown:
        raise DatasetError(
            f"{file}: unknown column(s) {', '.join(repr(c) for c in unknown)} "
            f"(expected some of {', '.join(allowed)})"
        )


def json_text(value: Mapping[str, str] | list[str]) -> str:
    """Compact, stable JSON for list/object cells (outcomes, token ids)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=isinstance(value, Mapping), separators=(",", ":"))
