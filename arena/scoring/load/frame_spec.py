"""The shape a scoring frame is declared in (``FrameSpec``: its columns, dtypes and row rules) and
the one check every frame goes through before scoring reads it (``FrameSpec.conform``).

Kept apart from ``frames``, which declares the arena's frames with these shapes, so the rules of
checking a frame read on their own and the declarations read as a list.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl


class FrameError(ValueError):
    """A scoring frame does not follow its column spec; the message names frame, column and row."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a frame: its dtype, what it means (``doc``: the frames' reference for anyone
    building frames of their own, read in ``frames``) and whether it may be null."""

    name: str
    dtype: pl.DataType
    doc: str
    nullable: bool = False


@dataclass(frozen=True, slots=True)
class Check:
    """A row rule: ``valid`` must be true on every row; ``expected`` says what was wanted."""

    column: str
    valid: pl.Expr
    expected: str


@dataclass(frozen=True, slots=True)
class FrameSpec:
    """A frame's contract: its columns, row rules, unique key and the column that stamps a row in
    time (what ``ScoringFrames.as_of`` cuts on)."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    checks: tuple[Check, ...] = ()
    time_column: str | None = None  # rows stamped after ``as_of`` are dropped by ``ScoringFrames.as_of``
    unique: tuple[str, ...] = ()

    @property
    def schema(self) -> dict[str, pl.DataType]:
        return {c.name: c.dtype for c in self.columns}

    def empty(self) -> pl.DataFrame:
        return pl.DataFrame(schema=self.schema)

    def conform(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Return ``frame`` with exactly this spec's columns and dtypes, or raise ``FrameError``.

        Extra columns are dropped; a column that cannot be cast, a null where none is allowed or
        a row breaking a check is reported with the first offending row number.
        """
        missing = [c.name for c in self.columns if c.name not in frame.columns]
        if missing:
            raise FrameError(f"{self.name}: missing column(s) {', '.join(missing)}")
        frame = frame.select([self._cast(frame, c) for c in self.columns])
        rules = [(c.name, pl.col(c.name).is_null(), "a value") for c in self.columns if not c.nullable]
        rules += [
            (check.column, check.valid.not_().fill_null(False), check.expected) for check in self.checks
        ]
        duplicated = pl.struct(list(self.unique)).is_duplicated().any() if self.unique else pl.lit(False)
        # Every rule in one pass over the frame (one collect, not one per rule); only a broken rule
        # is evaluated again, row by row, to name its first offending row.
        *broken, is_duplicated = frame.select(
            *(bad.any().alias(f"_{i}") for i, (_, bad, _) in enumerate(rules)), duplicated.alias("_unique")
        ).row(0)
        for (column, bad, expected), failed in zip(rules, broken, strict=True):
            if failed:
                _fail_on(frame, self.name, column, frame.select(bad).to_series(), expected)
        if is_duplicated:
            raise FrameError(f"{self.name}: rows must be unique on ({', '.join(self.unique)})")
        return frame

    def _cast(self, frame: pl.DataFrame, column: Column) -> pl.Series:
        series = frame[column.name]
        naive = isinstance(series.dtype, pl.Datetime) and series.dtype.time_zone is None
        if isinstance(column.dtype, pl.Datetime) and naive and series.null_count() < len(series):
            raise FrameError(f"{self.name}.{column.name}: expected UTC times, got naive datetimes")
        if series.dtype == column.dtype:  # most columns arrive typed: nothing to cast or check
            return series
        try:
            cast = series.cast(column.dtype, strict=True)
        except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
            raise FrameError(
                f"{self.name}.{column.name}: expected {column.dtype}, got {series.dtype} ({exc})"
            ) from None
        if (
            isinstance(series.dtype, pl.Decimal)
            and not (cast.cast(series.dtype) == series).fill_null(True).all()
        ):
            raise FrameError(f"{self.name}.{column.name}: more decimal places than {column.dtype} holds")
        return cast


def _fail_on(frame: pl.DataFrame, name: str, column: str, bad: pl.Series, expected: str) -> None:
    """Raise naming the first row ``bad`` flags, with its value, so a user can find it in their data."""
    if bad.any():
        row = int(bad.arg_true()[0])
        raise FrameError(f"{name} row {row}: {column} must be {expected}, got {frame[column][row]!r}")


def in_unit_interval(column: str) -> Check:
    """The rule of a probability or a price: in [0, 1]."""
    return Check(column, pl.col(column).is_between(0.0, 1.0), "a probability in [0, 1]")


def non_negative(column: str) -> Check:
    """The rule of an amount that cannot go below zero (stakes, shares, cash, costs)."""
    return Check(column, pl.col(column) >= 0, "non-negative")
