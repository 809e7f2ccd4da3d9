"""``arena markets sync``: keep a live venue's stored markets, prices and resolutions current.

One run, for one venue:
1. the venue's collector lists open markets, keeps the top N by volume that pass the filters,
   refreshes every stored unresolved market (agents may hold markets that left the top N),
   reads accounting prices and detects resolutions; an open market whose venue answers are
   those of its last sync, with no heartbeat due, is dropped there, before anything is built
   from it (``Tracked.unchanged``, ``arena.sync.unchanged``);
2. markets seen for the first time get a short price history, so momentum exists from round 1;
3. everything is written (``arena.sync.write``) in batches, one transaction per batch,
   idempotently: a market row is written only when a parsed field changed (with the raw payload
   those fields came from), a snapshot only when its prices changed or the last one is older than
   ``refresh_after`` (so an immediate re-run writes nothing), a resolution only once (a manual
   override is never replaced: the venue's own answer is stored beside it, and reported when it
   disagrees).

A market that fails (bad payload, no price) is logged with the reason and skipped; the others
carry on. No price is ever filled in: a market without a valid price gets no snapshot.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import partial
from typing import Any

import anyio
from sqlalchemy import Engine

from arena.core.clock import Clock
from arena.core.config_types import format_duration
from arena.core.heap import long_lived_heap
from arena.db.engine import session_scope
from arena.db.market_rows import existing_markets, stored_raw, tracked_markets
from arena.sync.types import Collector, NoProgress, Observation, Progress, SyncReport, SyncSettings, Tracked
from arena.sync.unchanged import recently_priced
from arena.sync.write import write_observations


class SyncDeadlineExceeded(Exception):
    """A sync whose requests did not finish within its deadline; nothing of it was written."""


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
    write_observations(engine, observations, clock.now(), settings, report, progress)
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
