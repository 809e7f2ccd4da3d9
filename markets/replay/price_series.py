"""Price series kept in columns from file to snapshot.

A dataset holds hundreds of thousands of price points; a replay looks at the few hundred markets
offered or held at an instant. So the points stay in a handful of compact arrays shared by every
market (``PriceColumns``): the time each became usable (integer UTC microseconds), the outcome
and the exact decimal price of each row (as indices into the market's outcomes and into the
dataset's distinct prices). A ``PriceSeries`` is one market's slice of them; a ``PriceSnapshot``
is built only when someone asks for a point, and the latest one is kept for the next ask.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np

from markets.types import NO, YES, Market, PriceSnapshot

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NO_PAIRS: tuple[tuple[datetime, Decimal], ...] = ()


def micros(at: datetime) -> int:
    """``at`` (aware) as integer microseconds since the epoch, the unit of ``PriceColumns.times``."""
    return (at - EPOCH) // _MICROSECOND


@dataclass(eq=False)
class PriceColumns:
    """Every price of a dataset, sorted by market, time and file row.

    Per point (one market at one time): ``times`` (usable from, UTC microseconds), ``starts``
    (its first row; one extra entry ends the last point) and ``first_prices`` (the price index of
    the market's first outcome, for history). Per row: ``outcomes`` (index into the market's
    outcomes) and ``prices`` (index into ``decimals``, the distinct exact prices).
    """

    times: np.ndarray
    starts: array[int]
    first_prices: array[int]
    outcomes: array[int]
    prices: array[int]
    decimals: list[Decimal]
    source: str
    _datetimes: dict[int, datetime] = field(default_factory=dict)

    def datetime_at(self, point: int) -> datetime:
        """The usable-from time of ``point`` as an aware UTC datetime (one object per distinct time)."""
        return self.datetime_of(int(self.times[point]))

    def datetime_of(self, us: int) -> datetime:
        """``us`` (UTC microseconds) as an aware datetime, one object per distinct time."""
        found = self._datetimes.get(us)
        if found is None:
            found = self._datetimes[us] = EPOCH + timedelta(microseconds=us)
        return found


class PriceSeries:
    """One market's prices, oldest first: points ``start`` to ``stop`` of the shared columns."""

    __slots__ = (
        "_columns",
        "_history",
        "_latest",
        "_market",
        "_market_id",
        "_start",
        "_stop",
        "_times",
        "first_row",
    )

    def __init__(
        self, columns: PriceColumns, market: Market, market_id: str, start: int, stop: int, first_row: int
    ) -> None:
        self._columns, self._market, self._market_id = columns, market, market_id
        self._start, self._stop = start, stop
        self._times: array[int] | None = None  # built on first use (``_time_array``)
        self._latest: tuple[int, PriceSnapshot] | None = None
        self._history: tuple[int, int, tuple[tuple[datetime, Decimal], ...]] | None = None
        self.first_row = first_row  # prices.csv row of the earliest price, for error messages

    def __len__(self) -> int:
        return self._stop - self._start

    @property
    def first_time(self) -> datetime:
        return self._columns.datetime_at(self._start)

    @property
    def last_time(self) -> datetime:
        return self._columns.datetime_at(self._stop - 1)

    @property
    def times(self) -> tuple[datetime, ...]:
        """When each point became usable (built on each call: for summaries and checks)."""
        return tuple(self._columns.datetime_at(p) for p in range(self._start, self._stop))

    @property
    def snapshots(self) -> tuple[PriceSnapshot, ...]:
        """Every point as a snapshot (built on each call: for summaries and checks)."""
        return tuple(self.snapshot(i) for i in range(len(self)))

    def index_at(self, as_of: datetime) -> int:
        """The index of the latest point usable at ``as_of`` (aware), or -1 before the first."""
        return self.index_at_micros(micros(as_of))

    def index_at_micros(self, us: int) -> int:
        """``index_at`` for a time already in UTC microseconds (``micros``)."""
        return bisect_right(self._time_array(), us) - 1

    def _time_array(self) -> array[int]:
        """The series' times as a plain array of its own, made on first use (not while loading): a
        binary search of it from Python costs a fifth of numpy's ``searchsorted`` call."""
        if self._times is None:
            span = self._columns.times[self._start : self._stop]
            self._times = array("q", span.astype(np.int64, copy=False).tobytes())
        return self._times

    def snapshot(self, index: int) -> PriceSnapshot:
        """Point ``index`` with every outcome's price (a binary market given YES alone gets
        NO = 1 − YES); the latest point built is kept, as a replay asks for it again and again."""
        if self._latest is not None and self._latest[0] == index:
            return self._latest[1]
        columns, point = self._columns, self._start + index
        names = self._market.outcomes
        prices = {
            names[columns.outcomes[r]]: columns.decimals[columns.prices[r]]
            for r in range(columns.starts[point], columns.starts[point + 1])
        }
        if self._market.is_binary and NO not in prices:
            prices[NO] = Decimal(1) - prices[YES]
        built = PriceSnapshot(
            market_id=self._market_id,
            prices=prices,
            observed_at=columns.datetime_at(point),
            source=columns.source,
        )
        self._latest = (index, built)
        return built

    def history(self, index: int, points: int) -> tuple[tuple[datetime, Decimal], ...]:
        """Up to ``points`` (time, first-outcome price) pairs ending at point ``index``, oldest
        first. Every round's snapshot asks this of every open market, a few points later than
        the round before: the pairs of the last answer still in the window are reused, so an ask
        builds only the pairs that are new (never the whole series: a replay reads a window of
        each market's points, and building every point's pair once cost a third of a snapshot)."""
        first, last = max(0, index + 1 - points), self._history
        start, kept = first, _NO_PAIRS
        if last is not None and last[0] <= first <= last[1] + 1 <= index + 1:
            start, kept = last[1] + 1, last[2][first - last[0] :]
        columns, times, base = self._columns, self._time_array(), self._start
        at, decimals, prices = columns.datetime_of, columns.decimals, columns.first_prices
        pairs = kept + tuple((at(times[i]), decimals[prices[base + i]]) for i in range(start, index + 1))
        self._history = (first, index, pairs)
        return pairs
