"""``arena markets sync``: keep a live venue's stored markets, prices and resolutions current.

One run, for one venue:
1. the venue's collector lists open markets, keeps the top N by volume that pass the filters,
   refreshes every stored unresolved market (agents may hold markets that left the top N),
   reads accounting prices and detects resolutions; an open market whose venue answers are
   those of its last sync, with no heartbeat due, is dropped there, before anything is built
   from it (``Tracked.unchanged``, ``arena.sync.unchanged``);
2. markets seen for the first time get a short price history, so momentum exists from round 1;
3. everything is written in batches, one transaction per batch, idempotently: a market row is
   written only when a parsed field changed (with the raw payload those fields came from), a
   snapshot only when its prices changed or the last one is older than ``refresh_after`` (so an
   immediate re-run writes nothing), a resolution only once (a manual override is never replaced:
   the venue's own answer is stored beside it, and reported when it disagrees).

A market that fails (bad payload, no price) is logged with the reason and skipped; the others
carry on. No price is ever filled in: a market without a valid price gets no snapshot.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any, Literal, Protocol

import anyio
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.core.clock import Clock
from arena.core.config_types import format_duration
from arena.core.heap import long_lived_heap
from arena.core.settings import Settings
from arena.db.engine import session_scope
from arena.db.market_rows import (
    Stored,
    existing_markets,
    load_stored,
    market_row,
    resolution_row,
    snapshot_row,
    stored_raw,
    tracked_markets,
    write_markets,
    write_resolutions,
    write_snapshots,
)
from arena.sync.outcomes import TRADING, describe, same_outcome, venue_answer, write_venue_answers
from arena.sync.unchanged import recently_priced, write_stamps
from markets.bounded import kept_json
from markets.concurrency import gather_bounded
from markets.http import DEFAULT_MAX_BODY_BYTES, PayloadError, VenueHTTPError
from markets.types import Market, PriceSnapshot, Resolution, Undecided, Venue

# A market as a venue listed it, with the raw payload it was parsed from (for its sync stamp).
Listed = tuple[Market, dict[str, Any]]

log = logging.getLogger(__name__)

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


class SyncDeadlineExceeded(Exception):
    """A sync whose requests did not finish within its deadline; nothing of it was written."""


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


async def run_sync(
    engine: Engine,
    collector: Collector,
    clock: Clock,
    settings: SyncSettings,
    progress: Progress | None = None,
) -> SyncReport:
    """Sync one venue into the database and say what happened."""
    with long_lived_heap():  # tens of thousands of payloads, on top of the process's own heap
        return await _sync(engine, collector, clock, settings, progress)


async def _sync(
    engine: Engine, collector: Collector, clock: Clock, settings: SyncSettings, progress: Progress | None
) -> SyncReport:
    started = time.perf_counter()
    progress = progress or NoProgress()
    now = clock.now()
    report = SyncReport(collector.venue, now)
    with session_scope(engine, write=False) as session:
        stored = tracked_markets(session, collector.venue, collector.sources)
    ids = {market_id: venue_id for market_id, (venue_id, _) in stored.items()}
    stamps = {market_id: stamp for market_id, (_, stamp) in stored.items()}
    tracked = Tracked(ids, stamps, partial(_read_raw, engine), partial(_recently_priced, engine))
    try:
        with anyio.fail_after(settings.deadline.total_seconds()):
            observations = await _observe(engine, collector, clock, tracked, now, settings, report, progress)
    except TimeoutError:
        raise SyncDeadlineExceeded(
            f"sync of {collector.venue.value} stopped at its deadline of "
            f"{format_duration(settings.deadline)} (ARENA_SYNC_DEADLINE) before writing anything"
        ) from None
    _write(engine, observations, clock.now(), settings, report, progress)
    report.seconds = time.perf_counter() - started
    return report


async def _observe(
    engine: Engine,
    collector: Collector,
    clock: Clock,
    tracked: Tracked,
    now: datetime,
    settings: SyncSettings,
    report: SyncReport,
    progress: Progress,
) -> list[Observation]:
    """Every request of the run: the collector's observations, with history for new markets."""
    observations = await collector.collect(clock, tracked, settings, report, progress)
    with session_scope(engine, write=False) as session:
        known = existing_markets(
            session, [o.market.market_id for o in observations if o.market.market_id not in tracked.ids]
        )
    known.update(tracked.ids)
    fresh = [o.market for o in observations if o.snapshots and o.market.market_id not in known]
    if fresh and settings.history_days > 0:
        histories = await collector.backfill(fresh, now, settings, report, progress)
        for obs in observations:
            obs.history = histories.get(obs.market.market_id, [])
    return observations


def _read_raw(engine: Engine, market_ids: Iterable[str]) -> dict[str, Any]:
    with session_scope(engine, write=False) as session:
        return stored_raw(session, market_ids)


def _recently_priced(
    engine: Engine, market_ids: Sequence[str], sources: Sequence[str], since: datetime
) -> set[str]:
    with session_scope(engine, write=False) as session:
        return recently_priced(session, market_ids, sources, since)


def _write(
    engine: Engine,
    observations: list[Observation],
    now: datetime,
    settings: SyncSettings,
    report: SyncReport,
    progress: Progress,
) -> None:
    """Write in batches; a batch that fails is written again market by market, so one bad row
    (say, a raw payload the database refuses) costs that market alone, named in a problem line."""
    progress.stage("writing", len(observations))
    for start in range(0, len(observations), settings.write_batch):
        batch = observations[start : start + settings.write_batch]
        failure = _write_batch(engine, batch, now, settings, report)
        if failure is not None and len(batch) > 1:
            failures = [(obs, _write_batch(engine, [obs], now, settings, report)) for obs in batch]
        else:
            failures = [(batch[0], failure)]
        for obs, reason in failures:
            if reason is not None:
                report.problem(obs.market.market_id, f"not written: {reason}")
        progress.advance(len(batch))


def _write_batch(
    engine: Engine, batch: list[Observation], now: datetime, settings: SyncSettings, report: SyncReport
) -> str | None:
    """One transaction for ``batch``; counts reach the report only once it committed. Returns why
    it failed (one line), or None."""
    try:
        with session_scope(engine) as session:
            stored = load_stored(session, [o.market.market_id for o in batch])
            markets, snapshots, history, resolutions = _rows(batch, stored, now, settings)
            written = (
                write_markets(session, markets),
                write_snapshots(session, snapshots),
                write_snapshots(session, history),
                write_resolutions(session, resolutions),
            )
            rewritten = {row["id"] for row in markets}
            write_stamps(session, _new_stamps(batch, stored, rewritten))
            found = {o.market.market_id: o.resolution for o in batch if o.resolution is not None}
            overrides = {m: s.override for m, s in stored.items() if s.override is not None and m in found}
            write_venue_answers(session, {m: venue_answer(found[m], now) for m in overrides})
    except (SQLAlchemyError, ValueError) as exc:
        cause = getattr(exc, "orig", None) or exc  # the driver's reason, not the statement and rows
        return str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    report.markets_written += written[0]
    report.snapshots_written += written[1]
    report.history_written += written[2]
    report.resolutions_written += written[3]
    for market_id, override in overrides.items():
        if not same_outcome(override, found[market_id]):
            report.contradiction(market_id, override, found[market_id])
    return None


def _new_stamps(
    batch: list[Observation], stored: Mapping[str, Stored], rewritten: set[str]
) -> dict[str, str]:
    """Stamps to store on market rows that are not rewritten (a rewrite carries its stamp)."""
    return {
        o.market.market_id: o.stamp
        for o in batch
        if o.stamp
        and o.market.market_id not in rewritten
        and (previous := stored.get(o.market.market_id)) is not None
        and previous.stamp != o.stamp
    }


def _rows(
    batch: list[Observation], stored: Mapping[str, Stored], now: datetime, settings: SyncSettings
) -> tuple[list[dict[str, Any]], ...]:
    markets, snapshots, history, resolutions = [], [], [], []
    kept = partial(kept_json, limit=settings.raw_kept_bytes)  # a raw payload past it: size and sha256
    for obs in batch:
        previous = stored.get(obs.market.market_id)
        status = obs.status if obs.status is not None or previous is None else previous.row["venue_status"]
        row = market_row(obs.market, {}, now, status=status)
        if previous is None or any(row[c] != previous.row[c] for c in previous.row):
            markets.append({**row, "raw_json": kept(dict(obs.raw)), "sync_stamp": obs.stamp or None})
        latest = previous.latest if previous else {}
        snapshots += [
            snapshot_row(s, kept(raw)) for s, raw in obs.snapshots if _worth_writing(s, latest, settings)
        ]
        history += [snapshot_row(s, None) for s in obs.history]
        if obs.resolution is not None and not (previous and previous.resolved):
            resolutions.append(resolution_row(obs.resolution, now, kept(dict(obs.raw))))
    return markets, snapshots, history, resolutions


def _worth_writing(
    snapshot: PriceSnapshot, latest: Mapping[str, PriceSnapshot], settings: SyncSettings
) -> bool:
    """New information: the first of its source, changed prices, or a heartbeat after ``refresh_after``."""
    before = latest.get(snapshot.source)
    if before is None:
        return True
    if snapshot.observed_at <= before.observed_at or not (snapshot.prices or before.prices):
        return False  # nothing newer, or a "seen closed" observation repeated
    same = (
        dict(snapshot.prices) == dict(before.prices)
        and dict(snapshot.bids) == dict(before.bids)
        and dict(snapshot.asks) == dict(before.asks)
    )
    return not same or snapshot.observed_at - before.observed_at >= settings.refresh_after
