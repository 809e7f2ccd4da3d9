"""The scheduled market sync: every venue that an active live cohort trades, with default settings.

Completed live cohorts keep their venue synced while a market they offered is unresolved, so
stated forecasts are scored against resolutions that come after the cohort completed.

Venue base URLs can be pointed elsewhere (a mirror, or the local fakes in tests) with
``ARENA_GAMMA_URL``, ``ARENA_CLOB_URL`` and ``ARENA_MANIFOLD_URL``.
"""

from __future__ import annotations

from sqlalchemy import Engine
from sqlmodel import Session

from arena.cohorts.config import config_from_frozen
from arena.core.clock import Clock
from arena.core.settings import Settings
from arena.core.summary import Summary
from arena.db.models import CohortRow
from arena.engine.live.jobs import awaiting_resolutions, live_cohorts
from arena.sync.types import SyncReport, SyncSettings
from arena.sync.venues import VenueUrls, sync_venue_blocking
from markets.types import Venue


def live_venues(engine: Engine) -> list[Venue]:
    """Venues of live cohorts still running or awaiting resolutions (nothing to sync without any)."""
    cohort_ids = sorted(set(live_cohorts(engine)) | set(awaiting_resolutions(engine)))
    with Session(engine) as session:
        rows = [session.get(CohortRow, cohort_id) for cohort_id in cohort_ids]
    venues = {config_from_frozen(row.config_json).venue for row in rows if row is not None}
    return sorted(v for v in venues if v is not None)


def sync_job(engine: Engine, clock: Clock) -> Summary:
    """Sync each live venue; a venue whose sync found nothing usable fails the job, one that met
    problems while storing the rest makes it partial (``Summary.warnings``)."""
    venues = live_venues(engine)
    if not venues:
        return Summary("no live cohort: nothing to sync", idle=True)
    parts = [sync_one_venue(engine, clock, venue) for venue in venues]
    return Summary(
        "; ".join(parts),
        idle=all(p.idle for p in parts),
        warnings=[w for p in parts for w in p.warnings],
    )


class SyncStoredNothing(RuntimeError):
    """A venue's sync met problems and stored nothing (the venue down, or answering garbage): the
    sync fails, as an outage of the venue, not a bug of the arena."""


def sync_one_venue(engine: Engine, clock: Clock, venue: Venue) -> Summary:
    """Sync ``venue`` with the process's sync settings (``ARENA_SYNC_TOP_N``...; the sync job's
    part per venue, in-process or as a worker's unit); a sync that stored nothing and met
    problems raises, one that stored something and met problems is partial. The summary names
    every venue answer that contradicts an operator's override."""
    settings = Settings()
    urls = VenueUrls(gamma=settings.gamma_url, clob=settings.clob_url, manifold=settings.manifold_url)
    report = sync_venue_blocking(
        engine, clock, venue, sync_settings(settings).limited_by(settings), urls=urls
    )
    if report.problems and report.selected + report.refreshed == 0:
        raise SyncStoredNothing(f"{venue}: sync stored nothing ({problems_line(report)})")
    wrote = report.markets_written + report.snapshots_written + report.resolutions_written
    warnings = [f"{venue}: {problems_line(report)}"] if report.problems else []
    text = f"{venue}: {report.selected} selected, {report.refreshed} refreshed, {wrote} rows written"
    if report.contradictions:
        text += f"; {len(report.contradictions)} overrides contradicted: {'; '.join(report.contradictions)}"
    return Summary(text, idle=wrote == 0 and not warnings, warnings=warnings)


def sync_settings(settings: Settings) -> SyncSettings:
    """What ``arena serve``'s sync keeps, from the ``ARENA_SYNC_*`` settings."""
    return SyncSettings(
        top_n=settings.sync_top_n,
        min_liquidity=settings.sync_min_liquidity,
        max_days_to_close=settings.sync_max_days_to_close or None,
        min_price=settings.sync_min_price,
        max_price=settings.sync_max_price,
        fetch_books=settings.sync_books,
        history_days=settings.sync_history_days,
        discovery=settings.sync_discovery,
    )


def problems_line(report: SyncReport, shown: int = 3) -> str:
    """The problems of a sync in one line: how many, and the first few."""
    first = "; ".join(f"{subject}: {reason}" for subject, reason in report.problems[:shown])
    more = f" (+{len(report.problems) - shown} more)" if len(report.problems) > shown else ""
    return f"{len(report.problems)} problem(s): {first}{more}"
