"""What a sync and a venue's collector share: settings, observations, the report, the contract.

``arena.sync.run`` drives one sync of one venue through a ``Collector``; ``arena.sync.polymarket``
and ``arena.sync.manifold`` are the venues' collectors, and ``backfill_each`` is the history step
they have in common.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any, Literal, Protocol

from arena.core.clock import Clock
from arena.core.settings import Settings
from arena.sync.outcomes import TRADING, describe
from markets.concurrency import gather_bounded
from markets.http import DEFAULT_MAX_BODY_BYTES, PayloadError, VenueHTTPError
from markets.types import Market, PriceSnapshot, Resolution, Undecided, Venue

# A market as a venue listed it, with the raw payload it was parsed from (for its sync stamp).
Listed = tuple[Market, dict[str, Any]]

# The report speaks for the sync run: its lines go to the run's logger.
log = logging.getLogger("arena.sync.run")

DEFAULT_MIN_LIQUIDITY = {Venue.POLYMARKET: Decimal(1000), Venue.MANIFOLD: Decimal(100)}


@dataclass(frozen=True, slots=True)
class SyncSettings:
    """What a sync keeps. Liquidity is in the venue's unit (USDC on Polymarket, mana on Manifold)."""

    top_n: int = 500
    min_liquidity: Decimal | None = None  # None: the venue's default above
    max_days_to_close: float | None = 180
    min_price: Decimal = Decimal("0.02")  # a market priced outside [min, max] is already decided
    max_price: Decimal = Decimal("0.98")
    fetch_books: bool = True
    history_days: int = 7  # backfill for new markets; 0 turns it off
    history_fidelity_minutes: int = 60
    refresh_after: timedelta = timedelta(minutes=10)
    discovery: Literal["markets", "events"] = "markets"  # Polymarket: /markets/keyset or /events/keyset
    manifold_scan: int = 2000  # Manifold: how many recently traded markets to consider
    concurrency: int = 8
    write_batch: int = 500
    # Bounds on what the venue may send (``limited_by`` reads them from the environment's settings).
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES  # decoded, per response
    request_deadline: timedelta = timedelta(seconds=60)  # one request, connect to last byte
    deadline: timedelta = timedelta(minutes=30)  # the run's requests, all of them
    raw_kept_bytes: int = 1024 * 1024  # a raw payload stored; past it, its size and sha256

    def limited_by(self, env: Settings) -> SyncSettings:
        """These settings under the environment's limits (``ARENA_VENUE_*``, ``ARENA_SYNC_DEADLINE``)."""
        return replace(
            self,
            max_body_bytes=env.venue_max_body_bytes,
            request_deadline=env.venue_request_deadline,
            deadline=env.sync_deadline,
            raw_kept_bytes=env.venue_raw_kept_bytes,
        )

    def liquidity_floor(self, venue: Venue) -> Decimal:
        return self.min_liquidity if self.min_liquidity is not None else DEFAULT_MIN_LIQUIDITY[venue]


@dataclass
class Observation:
    """What one run learned about one market: its payload, prices to record, maybe its resolution."""

    market: Market
    raw: Mapping[str, Any]
    snapshots: list[tuple[PriceSnapshot, Any]] = field(default_factory=list)  # (snapshot, its raw)
    resolution: Resolution | None = None
    history: list[PriceSnapshot] = field(default_factory=list)
    stamp: str = ""  # digest of the venue answers behind it (``arena.sync.unchanged``); "": none
    # The venue's state of the market (``MarketRow.venue_status``); None: not read (bad payload).
    status: str | None = None

    def outcome(self, found: Resolution | Undecided | None, report: SyncReport) -> None:
        """Take what the venue says of the market's outcome: still trading (None), not final yet
        (``Undecided``: counted and logged as pending), or final."""
        if found is None:
            self.status = TRADING
        elif isinstance(found, Undecided):
            self.status = found.reason
            report.pending(found)
        else:
            self.status = f"resolved {describe(found)}"
            self.resolution = found


@dataclass
class SyncReport:
    venue: Venue
    observed_at: datetime
    listed: int = 0
    selected: int = 0
    refreshed: int = 0
    markets_written: int = 0
    snapshots_written: int = 0
    history_written: int = 0
    resolutions_written: int = 0
    unchanged: int = 0  # skipped: same venue answers as the last sync, no heartbeat due
    # Listed markets of a kind the arena cannot trade (numeric markets, polls, multiple-choice
    # markets whose answers are separate yes/no questions): skipped, counted here.
    unsupported: int = 0
    undecided: list[Undecided] = field(default_factory=list)
    # Venue answers that disagree with an operator's override (which stands): one line each.
    contradictions: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def problem(self, subject: str, reason: str) -> None:
        """A market (or request) that could not be synced: one clear log line, and counted."""
        log.warning("sync %s: %s: %s", self.venue.value, subject, reason)
        self.problems.append((subject, reason))

    def contradiction(self, market_id: str, override: Resolution, answer: Resolution) -> None:
        """The venue resolved a market differently from the operator's override (which stands)."""
        line = (
            f"{market_id}: the venue resolved it {describe(answer)}, contradicting the operator's "
            f"override {describe(override)} (the override stands; see `arena markets pending`)"
        )
        log.warning("sync %s: %s", self.venue.value, line)
        self.contradictions.append(line)

    def pending(self, undecided: Undecided) -> None:
        """A closed market without a final answer yet: routine at every sync, so a DEBUG line."""
        log.debug("sync %s: %s not resolved yet: %s", self.venue.value, undecided.market_id, undecided.reason)
        self.undecided.append(undecided)


class Progress(Protocol):
    def stage(self, name: str, total: int | None) -> None: ...

    def advance(self, amount: int = 1) -> None: ...


class NoProgress:
    def stage(self, name: str, total: int | None) -> None:
        return None

    def advance(self, amount: int = 1) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Tracked:
    """Stored unresolved markets of the venue (id -> venue id) with the stamps of their last sync,
    read once at the start of a run; their last raw payload, and which are priced recently, on demand."""

    ids: Mapping[str, str]
    stamps: Mapping[str, str | None]
    raw: Callable[[Iterable[str]], dict[str, Any]]
    # (market ids, sources, since) -> those with a snapshot from every source observed after since
    recent: Callable[[Sequence[str], Sequence[str], datetime], set[str]]

    def unchanged(
        self, observed: Mapping[str, str], sources: Sequence[str], at: datetime, refresh_after: timedelta
    ) -> set[str]:
        """Open markets of ``observed`` (id -> stamp of this run's answers, prices read at ``at``)
        a sync may skip: the stamp of their last sync, and a price from each of ``sources``
        younger than ``refresh_after`` (older: a heartbeat is due, so the full path decides)."""
        same = [m for m, now_stamp in observed.items() if now_stamp and self.stamps.get(m) == now_stamp]
        return self.recent(same, sources, at - refresh_after) if same else set()


class Collector(Protocol):
    venue: Venue
    sources: tuple[str, ...]  # the snapshot sources it records (what makes a stored market "tracked")

    async def collect(
        self, clock: Clock, tracked: Tracked, settings: SyncSettings, report: SyncReport, progress: Progress
    ) -> list[Observation]:
        """Observations stamped with the clock's time once their payloads were read."""
        ...

    async def backfill(
        self,
        markets: Sequence[Market],
        now: datetime,
        settings: SyncSettings,
        report: SyncReport,
        progress: Progress,
    ) -> dict[str, list[PriceSnapshot]]: ...


async def backfill_each(
    markets: Sequence[Market],
    fetch: Callable[[Market], Awaitable[list[PriceSnapshot]]],
    settings: SyncSettings,
    report: SyncReport,
    progress: Progress,
) -> dict[str, list[PriceSnapshot]]:
    """Run a venue's history ``fetch`` for each new market, ``settings.concurrency`` at a time.

    A market whose history cannot be read gets none (and a problem line); the others still do.
    """
    progress.stage("history", len(markets))

    async def one(market: Market) -> list[PriceSnapshot]:
        try:
            return await fetch(market)
        except (VenueHTTPError, PayloadError) as exc:
            report.problem(market.market_id, f"price history not fetched: {exc}")
            return []
        finally:
            progress.advance()

    found = await gather_bounded([partial(one, m) for m in markets], settings.concurrency)
    return {m.market_id: points for m, points in zip(markets, found, strict=True) if points}


@dataclass(frozen=True, slots=True)
class Filters:
    """The listing filters of one sync, worked out once for the thousands of markets it reads."""

    now: datetime
    horizon: datetime | None  # closing later: too far out
    max_days: float | None
    floor: Decimal  # liquidity
    min_price: Decimal
    max_price: Decimal

    @classmethod
    def of(cls, settings: SyncSettings, venue: Venue, now: datetime) -> Filters:
        days = settings.max_days_to_close
        horizon = None if days is None else now + timedelta(days=days)
        floor = settings.liquidity_floor(venue)
        return cls(now, horizon, days, floor, settings.min_price, settings.max_price)

    def exclusion(
        self, close_time: datetime | None, liquidity: Decimal | None, prices: Sequence[Decimal]
    ) -> str | None:
        """Why a listed market is not kept (None: it is): closed, too far out, too thin, or decided."""
        if close_time is not None and close_time <= self.now:
            return "closes before now"
        if self.horizon is not None and close_time is not None and close_time > self.horizon:
            return f"closes more than {self.max_days:g} days out"
        if liquidity is None or liquidity < self.floor:
            return f"liquidity {liquidity} below {self.floor}"
        if prices and (min(prices) < self.min_price or max(prices) > self.max_price):
            return f"price outside [{self.min_price}, {self.max_price}]: already decided"
        return None
