"""Composition of a live sync: venue URLs -> httpx client -> venue clients -> collector -> ``run_sync``.

Used by ``arena markets sync`` and by the scheduler's sync job. Base URLs can point anywhere
(the fake venues in tests, a proxy); the defaults are the public APIs. One ``AsyncClient`` per
run, closed at the end, with connection limits sized for the batched CLOB calls.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import anyio
import httpx
from sqlalchemy import Engine

from arena.core.clock import Clock
from arena.core.tls import tls_context
from arena.sync.manifold import ManifoldCollector
from arena.sync.polymarket import PolymarketCollector
from arena.sync.run import run_sync
from arena.sync.types import Progress, SyncReport, SyncSettings
from markets.endpoints import CLOB_URL, GAMMA_URL, MANIFOLD_URL
from markets.http import JsonApi, RetryPolicy
from markets.manifold.client import ManifoldClient
from markets.polymarket.client import ClobClient, GammaClient
from markets.types import Venue


@dataclass(frozen=True, slots=True)
class VenueUrls:
    gamma: str = GAMMA_URL
    clob: str = CLOB_URL
    manifold: str = MANIFOLD_URL


async def sync_venue(
    engine: Engine,
    clock: Clock,
    venue: Venue,
    settings: SyncSettings,
    *,
    urls: VenueUrls | None = None,
    policy: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """One sync of ``venue`` into ``engine``'s database. Every request is bounded by ``settings``
    (decoded body, deadline), whatever else ``policy`` (attempts, timeouts) says."""
    urls = urls or VenueUrls()
    policy = replace(
        policy or RetryPolicy(),
        max_body_bytes=settings.max_body_bytes,
        deadline=settings.request_deadline.total_seconds(),
    )
    limits = httpx.Limits(
        max_connections=4 * settings.concurrency, max_keepalive_connections=2 * settings.concurrency
    )
    headers = {"User-Agent": "bettor-arena"}
    async with httpx.AsyncClient(limits=limits, headers=headers, verify=tls_context()) as client:
        if venue is Venue.POLYMARKET:
            gamma = GammaClient(JsonApi(client, urls.gamma, policy=policy))
            clob = ClobClient(JsonApi(client, urls.clob, policy=policy), concurrency=settings.concurrency)
            return await run_sync(engine, PolymarketCollector(gamma, clob), clock, settings, progress)
        manifold = ManifoldClient(JsonApi(client, urls.manifold, policy=policy))
        return await run_sync(engine, ManifoldCollector(manifold), clock, settings, progress)


def sync_venue_blocking(
    engine: Engine, clock: Clock, venue: Venue, settings: SyncSettings, *, urls: VenueUrls | None = None
) -> SyncReport:
    """``sync_venue`` from synchronous code (the scheduler's job bodies)."""

    async def main() -> SyncReport:
        return await sync_venue(engine, clock, venue, settings, urls=urls)

    return anyio.run(main)
