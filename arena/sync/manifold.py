"""The Manifold side of a sync: recently traded binary and multiple-choice markets, their
probabilities, and resolutions.

Manifold has no volume-ordered open listing in ``/v0/markets``, so the sync scans the most
recently traded markets (``sort=last-bet-time``, up to ``manifold_scan``), keeps the open BINARY
and MULTIPLE_CHOICE ones that pass the filters and takes the top N by volume. A listing does not
name a multiple-choice market's answers, so each one in the top N is read whole through
``/v0/market/{id}`` (its answers and their probabilities) and then judged on its prices like a
binary market; one whose answers do not sum to one (separate yes/no questions), or a numeric
market or a poll, is counted as not tradable here and skipped. Stored markets outside that set
are refreshed one by one through ``/v0/market/{id}``. The accounting price is each outcome's
probability (``manifold-prob``); new binary markets get their recent path from ``/v0/bets``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any

from arena.core.clock import Clock
from arena.sync.types import (
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
from markets.http import PayloadError, VenueHTTPError, amount, epoch_time, require
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
        ranked = sorted(candidates, key=lambda c: c.volume, reverse=True)[: settings.top_n]
        listed = await self._with_answers(ranked, now, settings, report)
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
            if not market.is_binary:  # a bet moves one answer's probability: no single path to keep
                return []
            points = parse.bet_history(await self._client.bets(market.venue_id, since), market.market_id)
            return [
                PriceSnapshot(market.market_id, {YES: p}, t, parse.BETS_SOURCE)
                for t, p in _last_per_time(points, now)
            ]

        return await backfill_each(markets, history, settings, report, progress)

    async def _scan(
        self, now: datetime, settings: SyncSettings, report: SyncReport, progress: Progress
    ) -> list[_Candidate]:
        kept: list[_Candidate] = []
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

    async def _with_answers(
        self, ranked: list[_Candidate], now: datetime, settings: SyncSettings, report: SyncReport
    ) -> list[Listed]:
        """The ranked candidates as listed markets: multiple-choice ones read whole (their answers)
        and judged on their prices; those that cannot be traded or fail the filters drop out."""
        filters = Filters.of(settings, Venue.MANIFOLD, now)

        async def whole(candidate: _Candidate) -> Listed | None:
            if candidate.listed is not None:
                return candidate.listed
            try:
                payload = await self._client.market(candidate.venue_id)
                if payload is None:
                    return None  # gone since it was listed
                market = parse.market_from_manifold(payload)
                prices = parse.manifold_prices(payload, market, now).prices
            except parse.Unsupported:
                report.unsupported += 1
                return None
            except (VenueHTTPError, PayloadError) as exc:
                report.problem(f"manifold market {candidate.venue_id!r}", f"skipped: {exc}")
                return None
            excluded = filters.exclusion(market.close_time, market.liquidity, list(prices.values()))
            return None if excluded else (market, payload)

        found = await gather_bounded([partial(whole, c) for c in ranked], settings.concurrency)
        return [listed for listed in found if listed is not None]

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


@dataclass(frozen=True, slots=True)
class _Candidate:
    """An open market of the listing that may be kept: a binary one parsed and judged already
    (``listed``), or a multiple-choice one to read whole for its answers first."""

    venue_id: str
    volume: Decimal
    listed: Listed | None = None


def _keep(
    payload: dict[str, Any], now: datetime, settings: SyncSettings, report: SyncReport
) -> _Candidate | None:
    """An open binary market passing the filters, or an open multiple-choice one passing those it
    can be judged on without its answers; other types are counted as not tradable here."""
    kind = payload.get("outcomeType")
    if kind not in (parse.BINARY, parse.MULTIPLE_CHOICE):
        report.unsupported += 1
        return None
    filters = Filters.of(settings, Venue.MANIFOLD, now)
    try:
        if not parse.is_open(payload, now):
            return None
        report.listed += 1
        if kind == parse.MULTIPLE_CHOICE:
            return _multiple_choice(payload, filters)
        market = parse.market_from_manifold(payload)
        prices = parse.manifold_prices(payload, market, now).prices
    except PayloadError as exc:
        report.problem(parse.describe(payload), f"skipped: {exc}")
        return None
    excluded = filters.exclusion(market.close_time, market.liquidity, list(prices.values()))
    return None if excluded else _Candidate(market.venue_id, market.volume or Decimal(0), (market, payload))


def _multiple_choice(payload: dict[str, Any], filters: Filters) -> _Candidate | None:
    """A listed multiple-choice market that passes the filters but the price's (read later)."""
    where = parse.describe(payload)
    venue_id = require(payload, "id", str, where=where)
    closes = epoch_time(payload.get("closeTime"), where=where, field="closeTime", millis=True)
    liquidity = amount(payload.get("totalLiquidity"), "totalLiquidity", where=where)
    if filters.exclusion(closes, liquidity, []) is not None:
        return None
    return _Candidate(venue_id, amount(payload.get("volume"), "volume", where=where) or Decimal(0))


def _priced_open(obs: Observation) -> bool:
    """Open with a probability read: what an unchanged stamp lets a sync skip."""
    return obs.resolution is None and [s.source for s, _ in obs.snapshots] == [parse.PROB_SOURCE]


def _last_per_time(points: list[tuple[datetime, Any]], now: datetime) -> list[tuple[datetime, Any]]:
    """One point per instant (the last bet wins, as it left the market there), none after ``now``."""
    by_time = {t: p for t, p in points if t <= now}
    return sorted(by_time.items())
