"""Column types that keep money exact and time zone-aware on both SQLite and PostgreSQL.

SQLite has no decimal type (NUMERIC affinity silently turns ``0.1`` into a float) and no time
zones (an aware datetime comes back naive). These decorators make both backends behave alike:

- ``ExactDecimal(scale)``: ``NUMERIC(18, scale)`` on PostgreSQL; on SQLite a 64-bit INTEGER of
  ``10**-scale`` units (micro-dollars for money), so SQL ordering, comparisons and ``SUM`` stay
  exact too. Values come back as ``Decimal`` with exactly ``scale`` places on both backends.
  A value with more places than the column holds is refused, never rounded: rounding is the
  domain's decision (the ledger quantizes), not the database's.
- ``UTCDateTime``: refuses naive datetimes, stores UTC, and always reads back aware UTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, Dialect, Numeric
from sqlalchemy.types import TypeDecorator, TypeEngine

# 18 digits fit a signed 64-bit integer (max ~9.22e18), so SQLite and PostgreSQL hold the same range.
PRECISION = 18
MONEY_SCALE = 6
SHARES_SCALE = 6
PRICE_SCALE = 10


class ExactDecimal(TypeDecorator[Decimal]):
    """A fixed-scale Decimal that round-trips exactly on SQLite and PostgreSQL."""

    impl = Numeric
    cache_ok = True

    def __init__(self, scale: int) -> None:
        super().__init__()
        self.scale = scale
        self._quantum = Decimal(1).scaleb(-scale)
        self._limit = Decimal(10) ** (PRECISION - scale)

    def __repr__(self) -> str:
        return f"ExactDecimal(scale={self.scale})"

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(BigInteger())
        return dialect.type_descriptor(Numeric(PRECISION, self.scale, asdecimal=True))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        exact = self._checked(value)
        if dialect.name == "sqlite":
            return int(exact.scaleb(self.scale))
        return exact

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        if dialect.name == "sqlite":
            return Decimal(int(value)).scaleb(-self.scale)
        return Decimal(value).quantize(self._quantum)

    def _checked(self, value: Any) -> Decimal:
        """The value as a Decimal of exactly ``scale`` places, or a ValueError saying why not."""
        if isinstance(value, bool) or not isinstance(value, Decimal | int):
            raise ValueError(
                f"expected a Decimal or int, got {type(value).__name__} {value!r} (floats are inexact)"
            )
        number = Decimal(value)
        if not number.is_finite():
            raise ValueError(f"expected a finite Decimal, got {number}")
        if abs(number) >= self._limit:
            raise ValueError(f"{number} is out of range: |value| must be below {self._limit}")
        try:
            exact = number.quantize(self._quantum)
        except InvalidOperation as exc:
            raise ValueError(f"{number} cannot be held with {self.scale} decimal places") from exc
        if exact != number:
            raise ValueError(
                f"{number} has more than {self.scale} decimal places; quantize it before storing"
            )
        return exact


def Money() -> ExactDecimal:
    """Dollars, exact to 1e-6."""
    return ExactDecimal(MONEY_SCALE)


def Shares() -> ExactDecimal:
    """Share counts, exact to 1e-6."""
    return ExactDecimal(SHARES_SCALE)


def Price() -> ExactDecimal:
    """Prices and per-unit costs, exact to 1e-10."""
    return ExactDecimal(PRICE_SCALE)


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime on both backends; naive input is an error, not a guess."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise ValueError(f"expected a datetime, got {type(value).__name__} {value!r}")
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value.isoformat()} has no time zone; use UTC")
        utc = value.astimezone(UTC)
        # SQLite keeps text without an offset: store naive UTC so text order is time order.
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        when: datetime = value
        return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def JSONDoc() -> TypeEngine[Any]:
    """JSON on SQLite (text), JSONB on PostgreSQL (queryable). Decimals go in as strings.

    The PostgreSQL dialect is imported here, when a table is declared, not with the module: the
    light read tables (``arena.db.read_tables``) use these types without it."""
    from sqlalchemy.dialects.postgresql import JSONB

    return JSON().with_variant(JSONB(), "postgresql")


def decimals_to_json(values: Mapping[str, Decimal]) -> dict[str, str]:
    """Per-outcome Decimals as JSON-safe strings, so prices and payouts stay exact in JSON columns."""
    return {key: str(value) for key, value in values.items()}


def decimals_from_json(values: Mapping[str, str], *, field: str) -> dict[str, Decimal]:
    """The inverse of ``decimals_to_json``; ``field`` names the column in the error."""
    out: dict[str, Decimal] = {}
    for key, text in values.items():
        try:
            out[key] = Decimal(text)
        except (InvalidOperation, TypeError) as exc:
            raise ValueError(f"{field}[{key!r}]: expected a decimal string, got {text!r}") from exc
    return out


def storable_text(text: str) -> str:
    """``text`` as both backends can hold it: NUL and lone surrogates written as visible escapes.

    PostgreSQL refuses NUL in text and JSONB, and no UTF-8 column takes a lone surrogate, which
    a model's or a plug-in's text can hold (a ``"\\ud800"`` JSON escape decodes to one). Text an
    agent wrote is kept with just those characters spelled as escapes (``\\x00``, ``\\ud800``),
    instead of the round failing to record it.
    """
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
