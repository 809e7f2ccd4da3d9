"""A reusable point-in-time check for any ``MarketSource`` (replay, Polymarket, Manifold).

Asked at many times, a source must never answer with something from after the time asked:
- nothing it returns is stamped after ``as_of`` (prices, history points, resolutions);
- a market whose resolution is stamped at or before ``as_of`` is not open and not in the snapshot;
- nor is a market whose close time is at or before ``as_of`` (the venue stopped trading it);
- the resolutions known at ``as_of`` are exactly those (of the latest time asked) stamped at or
  before it — a missing one means its stamp is earlier than when it became known;
- a price stamped at time o is the same whenever it is read: a value that changes between reads
  was written after its stamp (e.g. a day-bucketed row updated in place);
- ``latest_prices`` at ``as_of`` is never older than a price stamped at or before ``as_of`` that
  any other answer revealed: otherwise that stamp predates when the price became known;
- the snapshot is taken at ``as_of``, holds only open markets, and histories run oldest first.

What it cannot see: a source whose every stamp and answer are shifted together (say, a daily
close treated as known at the start of its day) is consistent with itself. Each source still
needs its own timing test against the rule for its data (replay: dated D, usable from D+1).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from markets.types import Market, MarketSnapshot, MarketSource, PriceSnapshot, Resolution


@dataclass(frozen=True, slots=True)
class Violation:
    as_of: datetime
    method: str
    market_id: str
    detail: str

    def __str__(self) -> str:
        return f"as_of {self.as_of.isoformat()}: {self.method}: {self.market_id}: {self.detail}"


class PointInTimeError(AssertionError):
    """Raised by ``check_point_in_time``; ``violations`` holds every problem found."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        shown = "\n".join(f"  {v}" for v in violations[:10])
        more = f"\n  ... and {len(violations) - 10} more" if len(violations) > 10 else ""
        super().__init__(f"{len(violations)} point-in-time violation(s):\n{shown}{more}")


def probe_times(start: datetime, end: datetime, *, count: int = 50, seed: int = 0) -> list[datetime]:
    """Times worth asking a source about: ``count`` random ones across [start − 1 day, end + 1 day]
    plus about ``count`` midnights, each asked exactly at 00:00 and one microsecond before (where
    off-by-one timing bugs live), shuffled so no answer can rely on the order of questions."""
    rng = random.Random(seed)
    day = timedelta(days=1)
    span = (end - start + 2 * day).total_seconds()
    times = [start - day + timedelta(seconds=rng.uniform(0, span)) for _ in range(count)]
    first = start.replace(hour=0, minute=0, second=0, microsecond=0)
    step = max(1, (end - start).days // max(1, count))
    midnights = [first + day * i for i in range(0, (end - start).days + 2, step)]
    times += [t - timedelta(microseconds=1) for t in midnights] + midnights
    rng.shuffle(times)
    return times


def check_point_in_time(source: MarketSource, times: Iterable[datetime], *, limit: int = 1000) -> None:
    """Raise ``PointInTimeError`` if ``source`` leaks anything at any of ``times``."""
    violations = find_violations(source, times, limit=limit)
    if violations:
        raise PointInTimeError(violations)


def find_violations(source: MarketSource, times: Iterable[datetime], *, limit: int = 1000) -> list[Violation]:
    """Query ``source`` at each time (in the order given) and list the violations found; stops
    asking once ``limit`` are found (a leaky source fails fast instead of listing thousands)."""
    asked = list(times)
    if not asked:
        return []
    audit = _Audit(final={r.market_id: r for r in source.resolutions(max(asked))})
    for as_of in asked:
        if len(audit.violations) >= limit:
            break
        audit.resolutions(as_of, source.resolutions(as_of))
        open_ids = audit.open_markets(as_of, source.open_markets(as_of))
        snapshot = source.snapshot(as_of)
        audit.snapshot(as_of, snapshot, open_ids)
        audit.markets_seen.update(open_ids)
        ids = sorted(audit.markets_seen | set(audit.final))
        audit.latest_prices(as_of, ids, source.latest_prices(ids, as_of))
    audit.answers_not_older_than_known()
    return audit.violations


@dataclass
class _Audit:
    final: Mapping[str, Resolution]
    violations: list[Violation] = field(default_factory=list)
    markets_seen: set[str] = field(default_factory=set)
    # (market id, stamp, outcome) -> (price, as_of it was first read at)
    readings: dict[tuple[str, datetime, str], tuple[Decimal, datetime]] = field(default_factory=dict)
    # (as_of, market id, stamp of the latest price answered or None)
    answers: list[tuple[datetime, str, datetime | None]] = field(default_factory=list)

    def flag(self, as_of: datetime, method: str, market_id: str, detail: str) -> None:
        self.violations.append(Violation(as_of, method, market_id, detail))

    def resolutions(self, as_of: datetime, known: list[Resolution]) -> None:
        reported = {r.market_id for r in known}
        for r in known:
            if r.resolved_at > as_of:
                self.flag(
                    as_of,
                    "resolutions",
                    r.market_id,
                    f"resolved_at {r.resolved_at.isoformat()} is after as_of",
                )
        for market_id, r in self.final.items():
            if r.resolved_at <= as_of and market_id not in reported:
                self.flag(
                    as_of,
                    "resolutions",
                    market_id,
                    f"stamped {r.resolved_at.isoformat()} but unknown here: the stamp predates the knowledge",
                )

    def open_markets(self, as_of: datetime, markets: list[Market]) -> set[str]:
        ids = [m.market_id for m in markets]
        if len(set(ids)) != len(ids):
            self.flag(as_of, "open_markets", "*", "a market is listed twice")
        for market in markets:
            resolution = self.final.get(market.market_id)
            if resolution is not None and resolution.resolved_at <= as_of:
                self.flag(
                    as_of,
                    "open_markets",
                    market.market_id,
                    f"open but resolved at {resolution.resolved_at.isoformat()}",
                )
            self.closed(as_of, "open_markets", market)
        return set(ids)

    def closed(self, as_of: datetime, method: str, market: Market) -> None:
        close = market.close_time
        if close is not None and close <= as_of:
            self.flag(as_of, method, market.market_id, f"offered but closed at {close.isoformat()}")

    def snapshot(self, as_of: datetime, snapshot: MarketSnapshot, open_ids: set[str]) -> None:
        if snapshot.as_of != as_of:
            self.flag(as_of, "snapshot", "*", f"snapshot is stamped {snapshot.as_of.isoformat()}")
        for entry in snapshot.entries:
            market_id = entry.market.market_id
            if market_id not in open_ids:
                self.flag(as_of, "snapshot", market_id, "in the snapshot but not open")
            self.closed(as_of, "snapshot", entry.market)
            self.price(as_of, "snapshot", entry.price)
            stamps = [when for when, _ in entry.history]
            if stamps != sorted(set(stamps)):
                self.flag(as_of, "snapshot.history", market_id, "history is not strictly oldest first")
            for when, value in entry.history:
                if when > as_of:
                    self.flag(
                        as_of, "snapshot.history", market_id, f"point stamped {when.isoformat()} after as_of"
                    )
                self.reading(as_of, "snapshot.history", (market_id, when, entry.market.outcomes[0]), value)

    def latest_prices(self, as_of: datetime, ids: list[str], found: Mapping[str, PriceSnapshot]) -> None:
        for market_id in ids:
            answer = found.get(market_id)
            self.answers.append((as_of, market_id, answer.observed_at if answer else None))
        for market_id, price in found.items():
            if market_id not in ids or price.market_id != market_id:
                self.flag(
                    as_of, "latest_prices", market_id, f"answered for a market not asked ({price.market_id})"
                )
            self.price(as_of, "latest_prices", price)

    def price(self, as_of: datetime, method: str, price: PriceSnapshot) -> None:
        if price.observed_at > as_of:
            self.flag(
                as_of,
                method,
                price.market_id,
                f"price observed_at {price.observed_at.isoformat()} after as_of",
            )
        for outcome, value in price.prices.items():
            self.reading(as_of, method, (price.market_id, price.observed_at, outcome), value)

    def reading(self, as_of: datetime, method: str, key: tuple[str, datetime, str], value: Decimal) -> None:
        earlier = self.readings.setdefault(key, (value, as_of))
        if earlier[0] != value:
            self.flag(
                as_of,
                method,
                key[0],
                f"{key[2]} price stamped {key[1].isoformat()} reads {value} here but {earlier[0]} "
                f"at as_of {earlier[1].isoformat()}: it changed after its stamp",
            )

    def answers_not_older_than_known(self) -> None:
        stamps: dict[str, list[datetime]] = {}
        for market_id, stamp, _ in self.readings:
            stamps.setdefault(market_id, []).append(stamp)
        for known in stamps.values():
            known.sort()
        for as_of, market_id, answered in self.answers:
            known = stamps.get(market_id, [])
            index = bisect_right(known, as_of) - 1
            if index >= 0 and (answered is None or answered < known[index]):
                self.flag(
                    as_of,
                    "latest_prices",
                    market_id,
                    f"answered {answered.isoformat() if answered else 'nothing'} though a price stamped "
                    f"{known[index].isoformat()} exists: that stamp predates when it became known",
                )
