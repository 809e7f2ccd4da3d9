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
from arena.db.models import CohortRow
from arena.engine.live.jobs import awaiting_resolutions, live_cohorts
from arena.sync.run import SyncSettings
from arena.sync.venues import VenueUrls, sync_venue_blocking
from markets.types import Venue


def live_venues(engine: Engine) -> list[Venue]:
    """Venues of live cohorts still running or awaiting resolutions (nothing to sync without any)."""
    cohort_ids = sorted(set(live_cohorts(engine)) | set(awaiting_resolutions(engine)))
    with Session(engine) as session:
        rows = [session.get(CohortRow, cohort_id) for cohort_id in cohort_ids]
    venues = {config_from_frozen(row.config_json).venue for row in rows if row is not None}
    return sorted(v for v in venues if v is not None)


def sync_job(engine: Engine, clock: Clock) -> str:
    """Sync each live venue; a venue whose sync found nothing usable fails the job."""
    venues = live_venues(engine)
    if not venues:
        return "no live cohort: nothing to sync"
    return "; ".join(sync_one_venue(engine, clock, venue) for venue in venues)


def sync_one_venue(engine: Engine, clock: Clock, venue: Venue) -> str:
    """Sync ``venue`` with default settings (the sync job's part per venue, in-process or as a
    worker's unit); a sync that stored nothing and met problems raises. The summary names every
    venue answer that contradicts an operator's override."""
    settings = Settings()
    urls = VenueUrls(gamma=settings.gamma_url, clob=settings.clob_url, manifold=settings.manifold_url)
    report = sync_venue_blocking(engine, clock, venue, SyncSettings().limited_by(settings), urls=urls)
    if report.problems and report.selected + report.refreshed == 0:
        raise RuntimeError(f"{venue}: sync stored nothing ({len(report.problems)} problems)")
    summary = f"{venue}: {report.selected} selected, {report.refreshed} refreshed"
    if report.contradictions:
        summary += (
            f"; {len(report.contradictions)} overrides contradicted: {'; '.join(report.contradictions)}"
        )
    return summary
