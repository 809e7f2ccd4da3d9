"""The value types of a cohort config: durations, UTC times, amounts, and the strict base of every
section. Apart from the sections themselves so that settings and scoring can use them without the
whole config."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer


def parse_duration(value: object) -> timedelta:
    """Accept ``"7d"``, ``"12h"``, ``"30m"`` or ``"90s"``: whole units, so schedules stay aligned."""
    if isinstance(value, timedelta):
        return value
    match = re.fullmatch(r"\s*(\d+)\s*([dhms])\s*", str(value))
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"expected a positive duration like '7d', '12h', '30m' or '90s', got {value!r}")
    amount, unit = int(match.group(1)), match.group(2)
    return timedelta(seconds=amount * _UNIT_SECONDS[unit])


_UNIT_SECONDS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}


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
    return value.astimezone(UTC)


Duration = Annotated[timedelta, BeforeValidator(parse_duration), PlainSerializer(format_duration)]
UtcDateTime = Annotated[
    datetime, BeforeValidator(_parse_utc), PlainSerializer(lambda d: d.isoformat().replace("+00:00", "Z"))
]
PositiveAmount = Annotated[Decimal, Field(gt=0), PlainSerializer(str)]
Probability = Annotated[Decimal, Field(ge=0, le=1), PlainSerializer(str)]


class Strict(BaseModel):
    """A config section: unknown keys are errors, values frozen once parsed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
