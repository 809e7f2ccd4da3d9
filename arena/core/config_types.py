"""The value types of a cohort config: durations, UTC times, amounts, and the strict base of every
section. Apart from the sections themselves so that settings and scoring can use them without the
whole config."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

# The longest duration anything takes (docs/limits-and-safety.md "Limits"): a century.
MAX_DURATION = timedelta(days=36_500)
# Money in a config: what the ledger's columns hold with room for a bet's payout (they hold
# |x| < 10^12), on the ledger's micro-dollar grid.
MAX_AMOUNT = Decimal(1_000_000_000)
AMOUNT_PLACES = 6


def parse_duration(value: object) -> timedelta:
    """Accept ``"7d"``, ``"12h"``, ``"30m"`` or ``"90s"``: whole units, so schedules stay aligned;
    at most ``MAX_DURATION``."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    else:
        match = re.fullmatch(r"\s*(\d{1,30})\s*([dhms])\s*", str(value))
        if not match or int(match.group(1)) == 0:
            raise ValueError(f"expected a positive duration like '7d', '12h', '30m' or '90s', got {value!r}")
        seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if not 0 < seconds <= MAX_DURATION.total_seconds():
        raise ValueError(
            f"expected a positive duration of at most {format_duration(MAX_DURATION)}, got {value!r}"
        )
    return timedelta(seconds=seconds)


_UNIT_SECONDS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}


def _amount(value: Decimal) -> Decimal:
    """A config's dollars: at most ``MAX_AMOUNT``, on the micro-dollar grid (never rounded)."""
    if value > MAX_AMOUNT:
        raise ValueError(f"must be at most {MAX_AMOUNT:,} (the ledger's range), got {value}")
    if value != value.quantize(Decimal(1).scaleb(-AMOUNT_PLACES)):
        raise ValueError(
            f"must have at most {AMOUNT_PLACES} decimal places (the ledger's micro-dollar), got {value}"
        )
    return value


def format_duration(delta: timedelta) -> str:
    """The inverse of the duration parser (largest whole unit), used when the config is frozen."""
    seconds = int(delta.total_seconds())
    unit = next(u for u, size in _UNIT_SECONDS.items() if seconds % size == 0)
    return f"{seconds // _UNIT_SECONDS[unit]}{unit}"


def _parse_utc(value: object) -> datetime:
    """TOML datetimes and ISO strings; naive values are rejected because their zone is a guess."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if not isinstance(value, datetime):
        raise ValueError(f"expected a UTC date-time like 2025-01-06T00:00:00Z, got {value!r}")
    if value.tzinfo is None:
        raise ValueError(f"date-time {value.isoformat()} has no time zone; add 'Z' for UTC")
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+05:00: before year 1 in UTC
        raise ValueError(f"date-time {value.isoformat()} is outside the years 1-9999 in UTC") from exc


Duration = Annotated[timedelta, BeforeValidator(parse_duration), PlainSerializer(format_duration)]
UtcDateTime = Annotated[
    datetime, BeforeValidator(_parse_utc), PlainSerializer(lambda d: d.isoformat().replace("+00:00", "Z"))
]
# allow_inf_nan: a TOML float 1e400 is infinity, which is not an amount; the check order matters,
# since quantizing a huge amount would raise.
PositiveAmount = Annotated[
    Decimal, Field(gt=0, allow_inf_nan=False), AfterValidator(_amount), PlainSerializer(str)
]
Probability = Annotated[Decimal, Field(ge=0, le=1), PlainSerializer(str)]


class Strict(BaseModel):
    """A config section: unknown keys are errors, values frozen once parsed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
