"""The Manifold side of a sync: recently traded binary markets, their probability, and resolutions.

Manifold has no volume-ordered open listing in ``/v0/markets``, so the sync scans the most
recently traded markets (``sort=last-bet-time``, up to ``manifold_scan``), keeps the open BINARY
ones that pass the filters and takes the top N by volume. Stored markets outside that set are
refreshed one by one through ``/v0/market/{id}``. The accounting price is the market's
``probability`` (``manifold-prob``); new markets get their recent path from ``/v0/bets``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from arena.core.clock import Clock
from arena.sync.run import (
    Filters,
    Listed,
    Observation,
    Progress,
    SyncReport,
    SyncSettings,
    Tracked,
    backfill_each,
)
from arena.sync.unchanged import stamp
from markets.concurrency import gather_bounded
from markets.http import PayloadError, VenueHTTPError
from markets.manifold import parse
from markets.manifold.client import ManifoldClient
from markets.types import YES, Market, PriceSnapshot, Venue

_RAW_PRICE_FIELDS = ("probability", "p", "pool", "lastBetTime", "lastUpdatedTime")


class ManifoldCollector:
    venue = Venue.MANIFOLD
    sources: tuple[str, ...] = (parse.PROB_SOURCE, parse.CLOSED_SOURCE)

    def __init__(self, client: ManifoldClient) -> None:
        self._client = client

    async def collect(
        self, clock: Clock, tracked: Tracked, settings: SyncSettings, report: SyncReport, progress: Progress
    ) -> list[Observation]:
        now = clock.now()
        progress.stage("listing", settings.manifold_scan)
        candidates = await self._scan(now, settings, report, progress)
        listed = sorted(candidates, key=lambda x: x[0].volume or 0, reverse=True)[: settings.top_n]
        kept = {m.market_id for m, _ in listed}
        rest = [i for i in tracked.ids if i not in kept]
        progress.stage("refreshing stored markets", len(rest))
        fetched = await gather_bounded(
            [partial(self._refresh, i, tracked.ids[i], report, progress) for i in rest], settings.concurrency
        )
        refreshed = [x for x in fetched if x is not None]
        report.selected, report.refreshed = len(listed), len(refreshed)
        seen = clock.now()  # the payloads (and their prices) were all read by now
        observations = [self._observe(m, p, seen, report) for m, p in listed + refreshed]
        priced = {o.market.market_id: o.stamp for o in observations if _priced_open(o)}
        skipped = tracked.unchanged(priced, (parse.PROB_SOURCE,), seen, settings.refresh_after)
        report.unchanged = len(skipped)
        return [o for o in observations if o.market.market_id not in skipped]

    async def backfill(
        self,
        markets: Sequence[Market],
        now: datetime,
        settings: SyncSettings,
        report: SyncReport,
        progress: Progress,
    ) -> dict[str, list[PriceSnapshot]]:
        """Each new market's probability after every filled bet of the last ``history_days``."""
        since = now - timedelta(days=settings.history_days)

        async def history(market: Market) -> list[PriceSnapshot]:
            points = parse.bet_history(await self._client.bets(market.venue_id, since), market.market_id)
            return [
                PriceSnapshot(market.market_id, {YES: p}, t, parse.BETS_SOURCE)
                for t, p in _last_per_time(points, now)
            ]

        return await backfill_each(markets, history, settings, report, progress)

    async def _scan(
        self, now: datetime, settings: SyncSettings, report: SyncReport, progress: Progress
    ) -> list[Listed]:
        kept: list[Listed] = []
        scanned = 0
        try:
            async for page in self._client.market_pages(page_size=min(1000, settings.manifold_scan)):
                for payload in page:
                    scanned += 1
                    listed = _keep(payload, now, settings, report)
                    if listed is not None:
                        kept.append(listed)
                progress.advance(len(page))
                if scanned >= settings.manifold_scan:
                    break
        except (VenueHTTPError, PayloadError) as exc:
            report.problem("listing", f"stopped early after {scanned} markets: {exc}")
        return kept

    async def _refresh(
        self, market_id: str, venue_id: str, report: SyncReport, progress: Progress
    ) -> Listed | None:
        try:
            payload = await self._client.market(venue_id)
        except (VenueHTTPError, PayloadError) as exc:
            report.problem(market_id, f"not refreshed: {exc}")
            return None
        finally:
            progress.advance()
        if payload is None:
            report.gone.append(market_id)
            report.problem(market_id, "gone: Manifold no longer knows this market; kept as stored")
            return None
        try:
            return parse.market_from_manifold(payload), payload
        except PayloadError as exc:
            report.problem(market_id, f"skipped: {exc}")
            return None

    def _observe(
        self, market: Market, payload: dict[str, Any], now: datetime, report: SyncReport
    ) -> Observation:
        obs = Observation(market, payload, stamp=stamp(payload))
        try:
            outcome = parse.manifold_resolution(payload, market, now)
            if outcome is None:
                snapshot = parse.manifold_prices(payload, market, now)
                obs.snapshots.append((snapshot, {k: payload[k] for k in _RAW_PRICE_FIELDS if k in payload}))
            else:
                seen_closed = {k: payload.get(k) for k in ("isResolved", "resolution", "closeTime")}
                obs.snapshots.append(
                    (PriceSnapshot(market.market_id, {}, now, parse.CLOSED_SOURCE), seen_closed)
                )
        except PayloadError as exc:
            report.problem(market.market_id, f"no price or resolution recorded: {exc}")
            return obs
        obs.outcome(outcome, report)
        return obs


def _keep(
    payload: dict[str, Any], now: datetime, settings: SyncSettings, report: SyncReport
) -> Listed | None:
    """An open binary market passing the filters; other types are skipped quietly (most of Manifold)."""
    if payload.get("outcomeType") != "BINARY":
        return None
    try:
        market = parse.market_from_manifold(payload)
        if not parse.is_open(payload, now):
            return None
        report.listed += 1
        prices = parse.manifold_prices(payload, market, now).prices
    except PayloadError as exc:
        report.problem(parse.describe(payload), f"skipped: {exc}")
        return None
    filters = Filters.of(settings, market.venue, now)
    excluded = filters.exclusion(market.close_time, market.liquidity, list(prices.values()))
    return None if excluded else (market, payload)


def _priced_open(obs: Observation) -> bool:
    """Open with a probability read: what an unchanged stamp lets a sync skip."""
    return obs.resolution is None and [s.source for s, _ in obs.snapshots] == [parse.PROB_SOURCE]


def _last_per_time(points: list[tuple[datetime, Any]], now: datetime) -> list[tuple[datetime, Any]]:
    """One point per instant (the last bet wins, as it left the market there), none after ``now``."""
    by_time = {t: p for t, p in points if t <= now}
    return sorted(by_time.items())
