"""The one place the arena reads time. Everything else is handed a ``Clock``.

Replays use ``SimulatedClock`` so that a whole cohort runs in simulated time; live runs use
``SystemClock``. All times are timezone-aware UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """Wall-clock UTC time."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class SimulatedClock:
    """A clock that only moves when told to; used by replays and tests."""

    def __init__(self, start: datetime) -> None:
        self._now = ensure_utc(start)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        when = ensure_utc(when)
        if when < self._now:
            raise ValueError(f"simulated clock cannot go back from {self._now} to {when}")
        self._now = when

    def advance(self, delta: timedelta) -> None:
        self.set(self._now + delta)


def ensure_utc(when: datetime) -> datetime:
    """Reject naive datetimes (their zone is a guess) and normalise aware ones to UTC."""
    if when.tzinfo is None:
        raise ValueError(f"naive datetime {when.isoformat()} has no time zone; use UTC")
    return when.astimezone(UTC)
