"""The loader's row plumbing: chunked ``IN`` queries (rows or a frame), rows to frames, prices, errors.

Shared by ``arena.scoring.load.database`` (bets, decisions, prices, marks) and ``arena.scoring.load.rounds``
(listings, tournament windows, offers, guards), which both read rows and hand them to a frame spec.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import polars as pl
from sqlalchemy.engine import Connection

from arena.db.columnar import read_frame
from arena.scoring.load.frame_spec import FrameSpec

_CHUNK = 500  # ids per IN (...) list, well under every backend's parameter limit


class LoadError(ValueError):
    """Stored rows cannot be read as scoring frames; the message names the table, row and field."""


def outcome_prices(market_id: str, prices: dict[str, str], binary: bool) -> dict[str, float]:
    try:
        values = {outcome: float(Decimal(str(v))) for outcome, v in prices.items()}
    except ArithmeticError:
        raise LoadError(f"price of {market_id!r}: prices_json {prices} holds a non-number") from None
    if not binary:
        return values
    if "YES" in values:
        return {"YES": values["YES"]}
    return {"YES": 1.0 - values["NO"]} if "NO" in values else {}


def chunked(connection: Connection, ids: list[str], query: Any) -> list[Any]:
    rows: list[Any] = []
    for start in range(0, len(ids), _CHUNK):
        rows.extend(connection.execute(query(ids[start : start + _CHUNK])).all())
    return rows


def chunked_frame(connection: Connection, ids: list[str], query: Any) -> pl.DataFrame:
    """``chunked``, read column-wise (``read_frame``): the rows of every chunk as one frame.

    No ids is one query of no ids, so the frame still has its columns and their dtypes."""
    starts = range(0, max(len(ids), 1), _CHUNK)
    return pl.concat([read_frame(connection, query(ids[start : start + _CHUNK])) for start in starts])


def frame_of(rows: Iterable[Sequence[Any]], spec: FrameSpec) -> pl.DataFrame:
    """Rows, in the order of ``spec``'s columns, as a frame; dtypes are fixed later by ``spec.conform``."""
    names = [column.name for column in spec.columns]
    # Transposed by ``zip`` in C, not value by value: a cohort has thousands of rows.
    # Both zips are strict, so every row must have exactly one value per column.
    columns = list(zip(*rows, strict=True)) or [() for _ in names]
    series = []
    for name, column in zip(names, columns, strict=True):
        values = list(column)
        series.append(pl.Series(name, values, dtype=dtype_hint(values)))
    return pl.DataFrame(series)


def dtype_hint(values: list[Any]) -> pl.DataType | None:
    """Decimal columns of mixed scale need a common dtype up front; others are inferred."""
    if Decimal in set(map(type, values)):  # the types of a whole column at C speed
        return pl.Decimal(38, 10)
    return None if values else pl.Null()
