"""Column checks shared by the dataset loader and the raw importers.

Each function reads one column of an all-text polars frame that carries a 1-based ``_row``
column, parses every distinct value once (fast on large files) and, on the first bad value,
raises an error naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TypeVar

import polars as pl

from markets.replay.format import DatasetError, OutsideSpan, in_price_span, parse_utc, row_error
from markets.types import PRICE_PLACES

ROW = "_row"
T = TypeVar("T")
_DATE_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}")
# A price written plainly in [0, 1] with at most PRICE_PLACES places ("0.4696", ".5", "1", "1.00"):
# the common case, taken as is without the general checks below.
_PLAIN_PRICE = re.compile(
    rf"0?\.\d{{1,{PRICE_PLACES}}}|0(?:\.\d{{0,{PRICE_PLACES}}})?|1(?:\.0{{0,{PRICE_PLACES}}})?"
)


def read_table(path: Path, label: str, content: bytes | None = None) -> pl.DataFrame:
    """Read a CSV file as text columns (no type guessing) with a 1-based ``_row`` column;
    ``content``, when given, is the file's bytes already read (``path`` then only names it)."""
    try:
        source = path if content is None else content
        frame = pl.read_csv(source, infer_schema=False, empty_string_is_null=False)
    except pl.exceptions.NoDataError as exc:
        raise DatasetError(f"{label}: the file is empty (expected a header row)") from exc
    except (pl.exceptions.ComputeError, UnicodeDecodeError) as exc:
        raise _unreadable(path, label, exc) from exc
    return frame.with_columns(pl.all().fill_null("")).with_row_index(ROW, offset=1)


def _unreadable(path: Path, label: str, exc: Exception) -> DatasetError:
    """Name the first record whose field count differs from the header's (the usual cause: an
    unquoted comma in hand-edited text), else pass on the parser's own first line."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            records = csv.reader(handle)
            width = len(next(records, []))
            for row, record in enumerate(records, start=1):
                if len(record) != width:
                    return DatasetError(
                        f"{label} row {row}: {len(record)} fields, expected {width} (one per header column)"
                    )
    except (UnicodeDecodeError, csv.Error):
        pass
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DatasetError(f"{label}: not a readable UTF-8 CSV file ({first_line})")


def first_row(frame: pl.DataFrame, mask: pl.Expr) -> dict[str, object] | None:
    """The earliest row matching ``mask``, or None."""
    hits = frame.filter(mask).sort(ROW)
    return hits.row(0, named=True) if hits.height else None


def require_cells(frame: pl.DataFrame, columns: Sequence[str], label: str) -> None:
    """Every cell of ``columns`` must be non-empty."""
    for column in columns:
        hit = first_row(frame, pl.col(column).str.strip_chars() == "")
        if hit is not None:
            raise row_error(label, int(str(hit[ROW])), column, "is empty")


def parse_column(
    frame: pl.DataFrame, column: str, label: str, parse: Callable[[str], T], expected: str
) -> dict[str, T]:
    """Parse each distinct value of ``column`` once; the first unparsable one (in file order)
    is reported at the row where it first occurs."""
    values = frame.select(pl.col(column).unique(maintain_order=True)).to_series().to_list()
    parsed: dict[str, T] = {}
    for text in values:
        try:
            parsed[text] = parse(text)
        except (ValueError, InvalidOperation) as exc:
            hit = first_row(frame, pl.col(column) == text)
            assert hit is not None
            reason = f" ({exc})" if str(exc) and not isinstance(exc, InvalidOperation) else ""
            problem = (
                f"{text!r} is {exc}"
                if isinstance(exc, OutsideSpan)
                else f"{text!r} is not {expected}{reason}"
            )
            raise row_error(label, int(str(hit[ROW])), column, problem) from exc
    return parsed


def parse_day(text: str) -> date:
    """A calendar date written exactly as YYYY-MM-DD."""
    if not _DATE_SHAPE.fullmatch(text):
        raise ValueError("wrong shape")
    return date.fromisoformat(text)


def parse_probability(text: str) -> Decimal:
    """An exact decimal in [0, 1] with at most ``PRICE_PLACES`` places; NaN and infinities are
    refused, never clamped, and so are finer prices (no fill could store them), never rounded."""
    if _PLAIN_PRICE.fullmatch(text):
        return Decimal(text)
    value = Decimal(text.strip())
    if not value.is_finite():
        raise ValueError("not finite")
    if not Decimal(0) <= value <= Decimal(1):
        raise ValueError("outside [0, 1]")
    if -int(value.as_tuple().exponent) > PRICE_PLACES:
        raise ValueError(f"more than {PRICE_PLACES} decimal places")
    return value


def parse_dates(frame: pl.DataFrame, column: str, label: str) -> dict[str, date]:
    """A column of price dates, each within ``PRICE_SPAN``."""
    return parse_column(frame, column, label, _price_day, "a date (expected YYYY-MM-DD)")


def parse_times(frame: pl.DataFrame, column: str, label: str) -> dict[str, datetime]:
    """A column of price times, each within ``PRICE_SPAN``."""
    return parse_column(
        frame,
        column,
        label,
        _price_time,
        "a time (expected ISO 8601 with a zone, e.g. 2025-01-31T00:00:00+00:00)",
    )


def _price_day(text: str) -> date:
    day = parse_day(text)
    in_price_span(day)
    return day


def _price_time(text: str) -> datetime:
    moment = parse_utc(text)
    in_price_span(moment.date())
    return moment


def parse_probabilities(frame: pl.DataFrame, column: str, label: str) -> dict[str, Decimal]:
    return parse_column(frame, column, label, parse_probability, "a price in [0, 1]")


def check_unique(
    frame: pl.DataFrame, keys: Sequence[str], label: str, shown: Sequence[str] | None = None
) -> None:
    """No two rows may share ``keys``; the error names both rows and the ``shown`` cells.

    Sorting the keys and comparing neighbours proves most files clean at a third of the time and
    memory of hashing every row; only a file that may hold a duplicate is searched for the first."""
    if not _maybe_duplicated(frame, keys):
        return
    marked = frame.with_columns(_first=pl.struct(list(keys)).is_first_distinct())
    dup = first_row(marked, ~pl.col("_first"))
    if dup is None:
        return
    same = pl.all_horizontal([pl.col(k) == dup[k] for k in keys])
    earlier = first_row(frame, same)
    assert earlier is not None
    cells = ", ".join(f"{k}={dup[k]}" for k in (shown or keys))
    raise DatasetError(f"{label} row {dup[ROW]}: duplicate of row {earlier[ROW]} ({cells})")


def _maybe_duplicated(frame: pl.DataFrame, keys: Sequence[str]) -> bool:
    """False only if no two rows share ``keys`` (neighbours after sorting differ; a leading
    missing value counts as a possible duplicate, which the exact search then settles)."""
    ordered = frame.select(keys).sort(list(keys))
    same = pl.all_horizontal([pl.col(k).eq_missing(pl.col(k).shift(1)) for k in keys])
    return bool(ordered.select(same.any()).item())
