"""The Polymarket side of a sync: Gamma for the catalog and resolutions, CLOB for prices.

Listing asks Gamma for open markets ordered by volume with the liquidity and close-date filters
applied server-side (``closed=false`` sent explicitly), re-checks every filter locally and stops
paging once N markets are kept. Stored markets outside that list are looked up by condition id
(open and closed separately, since Gamma filters on ``closed`` either way); one Gamma no longer
knows is confirmed gone through ``/markets/{id}``. Prices: the CLOB midpoint of every outcome is
the accounting price (``polymarket-clob-mid``, with best bid/ask from the book), Gamma's
``outcomePrices`` is kept beside it for comparison (``polymarket-gamma``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from arena.clock import Clock
from arena.sync.run import (
    Listed,
    Observation,
    Progress,
    SyncReport,
    SyncSettings,
    Tracked,
    backfill_each,
    exclusion,
)
from arena.sync.unchanged import stamp
from markets.http import PayloadError, VenueHTTPError, gather_bounded
from markets.polymarket import clob, gamma
from markets.polymarket.client import ClobClient, GammaClient, Query
from markets.types import Market, PriceSnapshot, Resolution, Undecided, Venue

_GAMMA_RAW_FIELDS = ("outcomePrices", "bestBid", "bestAsk", "lastTradePrice", "updatedAt")


class PolymarketCollector:
    venue = Venue.POLYMARKET
    sources: tuple[str, ...] = (clob.CLOB_MID_SOURCE, gamma.GAMMA_SOURCE, gamma.CLOSED_SOURCE)

    def __init__(self, gamma_client: GammaClient, clob_client: ClobClient) -> None:
        self._gamma = gamma_client
        self._clob = clob_client

    async def collect(
        self, clock: Clock, tracked: Tracked, settings: SyncSettings, report: SyncReport, progress: Progress
    ) -> list[Observation]:
        now = clock.now()
        progress.stage("listing", settings.top_n)
        listed = await self._list_open(now, settings, report, progress)
        kept = {m.market_id for m, _ in listed}
        rest = [i for i in tracked.ids if i not in kept]
        refreshed = await self._refresh(rest, tracked, settings, report, progress)
        report.selected, report.refreshed = len(listed), len(refreshed)
        everything = listed + refreshed
        priced = [(m, p) for m, p in everything if _open(p)]
        mids, quotes = await self._prices(priced, settings, progress)
        seen = clock.now()  # prices are stamped when they were read, not when the run began
        return [self._observe(m, p, mids, quotes, seen, report) for m, p in everything]

    async def backfill(
        self,
        markets: Sequence[Market],
        now: datetime,
        settings: SyncSettings,
        report: SyncReport,
        progress: Progress,
    ) -> dict[str, list[PriceSnapshot]]:
        """Recent CLOB price history of each new market's first outcome (stamped at bucket ends)."""
        start = now - timedelta(days=settings.history_days)

        async def history(market: Market) -> list[PriceSnapshot]:
            outcome = market.outcomes[0]
            token = market.token_ids[outcome]
            points = await self._clob.price_history(token, start, now, settings.history_fidelity_minutes)
            source = clob.CLOB_HISTORY_SOURCE
            return [PriceSnapshot(market.market_id, {outcome: p}, t, source) for t, p in points if t <= now]

        return await backfill_each(markets, history, settings, report, progress)

    async def _list_open(
        self, now: datetime, settings: SyncSettings, report: SyncReport, progress: Progress
    ) -> list[Listed]:
        kept: dict[str, Listed] = {}
        try:
            async for page in self._pages(now, settings):
                for payload in page:
                    listed = _parse(payload, report)
                    if listed is None or not _open(payload) or listed[0].market_id in kept:
                        continue
                    report.listed += 1
                    if _eligible(listed, now, settings, report):
                        kept[listed[0].market_id] = listed
                        progress.advance()
                    if len(kept) >= settings.top_n:
                        return list(kept.values())
        except (VenueHTTPError, PayloadError) as exc:
            report.problem("listing", f"stopped early after {report.listed} markets: {exc}")
        return list(kept.values())

    async def _pages(self, now: datetime, settings: SyncSettings) -> AsyncIterator[list[dict[str, Any]]]:
        """Open markets by volume, filtered server-side too (events filter on the event's totals)."""
        events = settings.discovery == "events"
        floor = str(settings.liquidity_floor(self.venue))
        filters: Query = [
            ("closed", False),
            ("ascending", False),
            ("order", "volume" if events else "volumeNum"),
        ]
        filters.append(("liquidity_min" if events else "liquidity_num_min", floor))
        if settings.max_days_to_close is not None:
            latest = now + timedelta(days=settings.max_days_to_close)
            filters.append(("end_date_max", latest.strftime("%Y-%m-%dT%H:%M:%SZ")))
        if events:
            async for page in self._gamma.event_pages(filters):
                yield [m for event in page for m in gamma.markets_of_event(event)]
        else:
            async for page in self._gamma.market_pages(filters):
                yield page

    async def _refresh(
        self,
        market_ids: list[str],
        tracked: Tracked,
        settings: SyncSettings,
        report: SyncReport,
        progress: Progress,
    ) -> list[Listed]:
        """Stored markets outside the listing: by condition id, then by Gamma id for those not found."""
        progress.stage("refreshing stored markets", len(market_ids))
        wanted = {tracked.ids[i]: i for i in market_ids}
        found: dict[str, Listed] = {}
        for closed in (False, True):
            try:
                payloads = await self._gamma.markets_by_condition_ids(list(wanted), closed=closed)
            except (VenueHTTPError, PayloadError) as exc:
                report.problem(f"lookup of {len(wanted)} stored markets (closed={closed})", str(exc))
                continue
            for payload in payloads:
                listed = _parse(payload, report)
                if listed is not None and listed[0].venue_id in wanted:
                    found[listed[0].market_id] = listed
        missing = [i for i in market_ids if i not in found]
        raw = tracked.raw(missing)
        confirmed = await gather_bounded(
            [partial(self._by_gamma_id, i, raw.get(i), report) for i in missing], settings.concurrency
        )
        found.update({listed[0].market_id: listed for listed in confirmed if listed is not None})
        progress.advance(len(market_ids))
        return list(found.values())

    async def _by_gamma_id(self, market_id: str, raw: Any, report: SyncReport) -> Listed | None:
        gamma_id = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(gamma_id, str):
            report.problem(market_id, "not found by condition id and no stored Gamma id to look it up")
            return None
        try:
            payload = await self._gamma.market(gamma_id)
        except (VenueHTTPError, PayloadError) as exc:
            report.problem(market_id, f"GET /markets/{gamma_id} failed: {exc}")
            return None
        if payload is None:
            report.gone.append(market_id)
            report.problem(market_id, f"gone: Gamma no longer knows market {gamma_id}; kept as stored")
            return None
        return _parse(payload, report)

    async def _prices(
        self, priced: list[Listed], settings: SyncSettings, progress: Progress
    ) -> tuple[dict[str, clob.TokenPrice], dict[str, clob.Quote | str]]:
        tokens = [t for market, _ in priced for t in gamma.ordered_tokens(market)]
        progress.stage("prices", len(priced))
        mids = await self._clob.midpoints(tokens)
        quotes = await self._clob.books(tokens) if settings.fetch_books else {}
        progress.advance(len(priced))
        return mids, quotes

    def _observe(
        self,
        market: Market,
        payload: dict[str, Any],
        mids: dict[str, clob.TokenPrice],
        quotes: dict[str, clob.Quote | str],
        now: datetime,
        report: SyncReport,
    ) -> Observation:
        tokens = gamma.ordered_tokens(market)
        obs = Observation(
            market, payload, stamp=stamp(payload, [[mids.get(t), quotes.get(t)] for t in tokens])
        )
        if _open(payload):
            obs.pending = partial(_price, mids=mids, quotes=quotes, now=now, report=report)
            obs.pending_sources, obs.pending_at = (clob.CLOB_MID_SOURCE, gamma.GAMMA_SOURCE), now
            return obs
        seen_closed = {k: payload.get(k) for k in ("closed", "umaResolutionStatus", "closedTime")}
        obs.snapshots.append((PriceSnapshot(market.market_id, {}, now, gamma.CLOSED_SOURCE), seen_closed))
        try:
            outcome = gamma.gamma_resolution(payload, market, now)
        except PayloadError as exc:
            report.problem(market.market_id, f"resolution not read: {exc}")
            return obs
        if isinstance(outcome, Undecided):
            report.pending(outcome)
        elif isinstance(outcome, Resolution):
            obs.resolution = outcome
        return obs


def _price(
    obs: Observation,
    *,
    mids: dict[str, clob.TokenPrice],
    quotes: dict[str, clob.Quote | str],
    now: datetime,
    report: SyncReport,
) -> None:
    """An open market's snapshots: the CLOB accounting price, and Gamma's beside it (built only
    for markets a sync does not skip as unchanged: ``Observation.settle``)."""
    market, payload = obs.market, obs.raw
    try:
        snapshot = clob.clob_snapshot(market, mids, quotes, now)
        obs.snapshots.append((snapshot, _clob_raw(market, snapshot)))
    except PayloadError as exc:
        report.problem(market.market_id, f"no accounting price recorded: {exc}")
    try:
        comparison = gamma.gamma_prices(payload, market, now)
        obs.snapshots.append((comparison, {k: payload[k] for k in _GAMMA_RAW_FIELDS if k in payload}))
    except PayloadError as exc:
        report.problem(market.market_id, f"Gamma comparison price not recorded: {exc}")


def _parse(payload: dict[str, Any], report: SyncReport) -> Listed | None:
    try:
        return gamma.market_from_gamma(payload), payload
    except PayloadError as exc:
        report.problem(gamma.describe(payload), f"skipped: {exc}")
        return None


def _eligible(listed: Listed, now: datetime, settings: SyncSettings, report: SyncReport) -> bool:
    """Passes the filters, judged on Gamma's prices (the listing's own); unreadable prices: skipped."""
    market, payload = listed
    try:
        prices = gamma.outcome_prices(payload)
    except PayloadError as exc:
        report.problem(market.market_id, f"skipped: {exc}")
        return False
    return exclusion(market, prices, now, settings) is None


def _open(payload: dict[str, Any]) -> bool:
    return payload.get("closed") is False


def _clob_raw(market: Market, snapshot: PriceSnapshot) -> dict[str, Any]:
    """The CLOB strings behind the snapshot, as received: token id, mid and best bid/ask per outcome."""
    return {
        outcome: {
            "token_id": market.token_ids[outcome],
            "mid": str(snapshot.prices[outcome]),
            **({"best_bid": str(snapshot.bids[outcome])} if outcome in snapshot.bids else {}),
            **({"best_ask": str(snapshot.asks[outcome])} if outcome in snapshot.asks else {}),
        }
        for outcome in market.outcomes
    }
