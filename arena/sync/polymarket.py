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

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from arena.core.clock import Clock
from arena.sync.listing_facts import ListingFacts, listing_facts, new_sync
from arena.sync.types import (
    Filters,
    Observation,
    Progress,
    SyncReport,
    SyncSettings,
    Tracked,
    backfill_each,
)
from arena.sync.unchanged import digest, stamp
from markets.concurrency import gather_bounded, task_group
from markets.http import PayloadError, VenueHTTPError, decode_json
from markets.polymarket import clob, gamma
from markets.polymarket.client import ClobClient, GammaClient, Query, TokenPrices
from markets.types import Market, PriceSnapshot, Venue

_GAMMA_RAW_FIELDS = ("outcomePrices", "bestBid", "bestAsk", "lastTradePrice", "updatedAt")
_PRICE_SOURCES = (clob.CLOB_MID_SOURCE, gamma.GAMMA_SOURCE)


@dataclass(slots=True)
class _Entry:
    """A Gamma market payload as read, parsed into a ``Market`` only when the sync needs one.

    ``gamma_stamp`` is the payload's digest: equal to the first half of the market's stored
    stamp, the payload is the one its last sync parsed (and validated), so the listing filters
    read the few fields they need from it and the whole parse waits until the market turns out
    not to be skipped (most of a re-sync's markets are). From a listing, such a payload holds only
    ``gamma.ListingFields`` until then, and ``sent`` is its JSON as sent (``whole`` decodes it). A
    market's stamp is ``gamma_stamp`` followed by the digest of its tokens' CLOB midpoints and
    books, as fingerprinted by ``clob.Answers``.
    """

    market_id: str
    payload: dict[str, Any]
    gamma_stamp: str
    market: Market | None = None  # None: not parsed yet
    sent: bytes | None = None  # set while ``payload`` holds the listing fields alone
    _tokens: tuple[str, ...] | None = None

    def tokens(self) -> tuple[str, ...]:
        """Its CLOB token ids in the payload's order (the same order whether parsed or not)."""
        if self._tokens is None:
            self._tokens = tuple(gamma.json_array(self.payload, "clobTokenIds"))
        return self._tokens

    def listing(self) -> ListingFacts:
        """What the listing filters read of the payload (kept across syncs: ``listing_facts``);
        its token ids become the entry's, so a kept payload's are not decoded again."""
        facts = listing_facts(self.gamma_stamp, self._read_listing)
        self._tokens = facts.tokens
        return facts

    def _read_listing(self) -> ListingFacts:
        payload, market, tokens = self.payload, self.market, self.tokens()
        return ListingFacts(
            tokens,
            market.close_time if market is not None else gamma.close_time(payload),
            market.liquidity if market is not None else gamma.liquidity(payload),
            gamma.price_values(payload, len(tokens)),  # one token per outcome
        )

    def whole(self) -> dict[str, Any]:
        """The whole payload (decoded from the JSON as sent, the first time it is asked for)."""
        if self.sent is not None:
            self.payload, self.sent = decode_json(self.sent), None
        return self.payload


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
        new_sync()  # what the last sync read of a payload stays at hand for this one
        async with task_group() as group:
            # The CLOB prices each kept market's tokens while Gamma serves the next pages.
            prices = self._clob.prices_as_listed(group, books=settings.fetch_books)
            progress.stage("listing", settings.top_n)
            listed = await self._list_open(now, tracked, settings, report, progress, prices)
            kept = {e.market_id for e in listed}
            rest = [i for i in tracked.ids if i not in kept]
            refreshed = await self._refresh(rest, tracked, settings, report, progress)
            prices.add([t for e in refreshed if _open(e.payload) for t in e.tokens()])
            prices.flush()
            progress.stage("prices", prices.requested)
        progress.advance(prices.requested)
        report.selected, report.refreshed = len(listed), len(refreshed)
        mids, quotes = prices.mids, prices.quotes
        seen = clock.now()  # prices are stamped when they were read, not when the run began
        everything = listed + refreshed
        # Fingerprints, not parsed prices: only the markets that changed get their answers parsed.
        stamps = {
            e.market_id: e.gamma_stamp
            + digest(mids.fingerprints(e.tokens()) + "\n" + quotes.fingerprints(e.tokens()))
            for e in everything
        }
        candidates = {e.market_id: stamps[e.market_id] for e in everything if _open(e.payload)}
        skipped = tracked.unchanged(candidates, _PRICE_SOURCES, seen, settings.refresh_after)
        report.unchanged = len(skipped)
        observations = []
        for entry in everything:
            if entry.market_id in skipped:
                continue
            market = entry.market or _parse(entry.whole(), report)
            if market is not None:
                observation = Observation(market, entry.whole(), stamp=stamps[entry.market_id])
                observations.append(self._observe(observation, mids, quotes, seen, report))
        return observations

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
        self,
        now: datetime,
        tracked: Tracked,
        settings: SyncSettings,
        report: SyncReport,
        progress: Progress,
        prices: TokenPrices,
    ) -> list[_Entry]:
        kept: dict[str, _Entry] = {}
        filters = Filters.of(settings, self.venue, now)
        try:
            async for page in self._pages(now, settings):
                for payload, sent in page:
                    entry = _entry(payload, sent, tracked, report)
                    if entry is None or not _open(payload) or entry.market_id in kept:
                        continue
                    report.listed += 1
                    if _eligible(entry, filters, report):
                        kept[entry.market_id] = entry
                        prices.add(entry.tokens())
                        progress.advance()
                    if len(kept) >= settings.top_n:
                        return list(kept.values())
        except (VenueHTTPError, PayloadError) as exc:
            report.problem("listing", f"stopped early after {report.listed} markets: {exc}")
        return list(kept.values())

    async def _pages(
        self, now: datetime, settings: SyncSettings
    ) -> AsyncIterator[list[tuple[dict[str, Any], bytes | None]]]:
        """Open markets by volume, filtered server-side too (events filter on the event's totals):
        from a listing, each market's listing fields and its JSON as sent; whole payloads from
        events (their markets get the event's category) or from a body read whole."""
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
                yield [(m, None) for event in page for m in gamma.markets_of_event(event)]
        else:
            async for page in self._gamma.market_listing(filters):
                sent: list[bytes | None] = list(page.sent) if page.sent is not None else [None] * len(page)
                yield list(zip(page, sent, strict=True))

    async def _refresh(
        self,
        market_ids: list[str],
        tracked: Tracked,
        settings: SyncSettings,
        report: SyncReport,
        progress: Progress,
    ) -> list[_Entry]:
        """Stored markets outside the listing: by condition id, then by Gamma id for those not found."""
        progress.stage("refreshing stored markets", len(market_ids))
        wanted = {tracked.ids[i]: i for i in market_ids}
        found: dict[str, _Entry] = {}
        for closed in (False, True):
            try:
                payloads = await self._gamma.markets_by_condition_ids(list(wanted), closed=closed)
            except (VenueHTTPError, PayloadError) as exc:
                report.problem(f"lookup of {len(wanted)} stored markets (closed={closed})", str(exc))
                continue
            for payload in payloads:
                entry = _entry(payload, None, None, report)
                if entry is not None and entry.market is not None and entry.market.venue_id in wanted:
                    found[entry.market_id] = entry
        missing = [i for i in market_ids if i not in found]
        raw = tracked.raw(missing)
        confirmed = await gather_bounded(
            [partial(self._by_gamma_id, i, raw.get(i), report) for i in missing], settings.concurrency
        )
        found.update({entry.market_id: entry for entry in confirmed if entry is not None})
        progress.advance(len(market_ids))
        return list(found.values())

    async def _by_gamma_id(self, market_id: str, raw: Any, report: SyncReport) -> _Entry | None:
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
        return _entry(payload, None, None, report)

    def _observe(
        self,
        obs: Observation,
        mids: Mapping[str, clob.TokenPrice],
        quotes: Mapping[str, clob.Quote | str],
        now: datetime,
        report: SyncReport,
    ) -> Observation:
        market, payload = obs.market, obs.raw
        if _open(payload):
            _price(obs, mids, quotes, now, report)
            obs.outcome(None, report)
            return obs
        seen_closed = {k: payload.get(k) for k in ("closed", "umaResolutionStatus", "closedTime")}
        obs.snapshots.append((PriceSnapshot(market.market_id, {}, now, gamma.CLOSED_SOURCE), seen_closed))
        try:
            outcome = gamma.gamma_resolution(payload, market, now)
        except PayloadError as exc:
            report.problem(market.market_id, f"resolution not read: {exc}")
            return obs
        obs.outcome(outcome, report)
        return obs


def _price(
    obs: Observation,
    mids: Mapping[str, clob.TokenPrice],
    quotes: Mapping[str, clob.Quote | str],
    now: datetime,
    report: SyncReport,
) -> None:
    """An open market's snapshots: the CLOB accounting price, and Gamma's beside it."""
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


def _entry(
    payload: dict[str, Any], sent: bytes | None, tracked: Tracked | None, report: SyncReport
) -> _Entry | None:
    """The payload as an entry: left unparsed when it is the one the market's last sync parsed
    (``tracked`` holds the stored stamps; None: always parse), None when it cannot be read.
    ``sent``: the payload's JSON as sent, when ``payload`` holds only the listing fields."""
    gamma_stamp = digest(sent) if sent is not None else stamp(payload)
    market_id = gamma.market_key_of(payload)
    previous = tracked.stamps.get(market_id) if tracked is not None and market_id is not None else None
    if market_id is not None and previous is not None and previous.startswith(gamma_stamp):
        return _Entry(market_id, payload, gamma_stamp, sent=sent)
    whole = decode_json(sent) if sent is not None else payload
    market = _parse(whole, report)
    return None if market is None else _Entry(market.market_id, whole, gamma_stamp, market)


def _parse(payload: dict[str, Any], report: SyncReport) -> Market | None:
    try:
        return gamma.market_from_gamma(payload)
    except PayloadError as exc:
        report.problem(gamma.describe(payload), f"skipped: {exc}")
        return None


def _eligible(entry: _Entry, filters: Filters, report: SyncReport) -> bool:
    """Passes the filters, judged on Gamma's prices (the listing's own); unreadable prices: skipped."""
    try:
        facts = entry.listing()
    except PayloadError as exc:
        report.problem(entry.market_id, f"skipped: {exc}")
        return False
    return filters.exclusion(facts.closes, facts.liquidity, facts.prices) is None


def _open(payload: Mapping[str, Any]) -> bool:
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
