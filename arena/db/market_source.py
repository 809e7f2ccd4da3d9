"""``DbMarketSource``: the live ``MarketSource``, answering from what ``arena markets sync`` stored.

Live rounds read the database rather than the venues, so a round can be re-run and audited
exactly: every answer uses only rows stamped at or before ``as_of``.
- A price is the newest *accounting* snapshot (CLOB midpoint on Polymarket, probability on
  Manifold) observed at or before ``as_of``; Gamma comparison prices are never served.
- A resolution is known from max(venue ``resolved_at``, ``detected_at``): the arena cannot act on
  an outcome before it learned it.
- A market is open at ``as_of`` when sync saw it trading within ``max_price_age`` before, has not
  seen it closed since (sync writes a price-less ``*-closed`` observation when it finds a market
  stopped trading, so it leaves the open set exactly then, without editing history), no
  resolution is known, and its close time has not passed. Market metadata is not versioned: the
  row holds its latest synced values, so the close time is only used when that row was already
  written by ``as_of`` (``updated_at``); a close time synced later (a creator moved it) would be
  knowledge from after ``as_of``, and then sync's own observations alone decide. Such a market,
  open as the arena knew it then, is served without a close time if the later one had passed by
  ``as_of``: no answer says a market is both open and closed (``Market.is_closed``).
- Snapshot histories are the recent first-outcome accounting prices within ``history_window``,
  oldest first. Backfilled venue history is not served here: its points carry the venue's time
  but were learned when fetched, so serving them would answer with knowledge from later than
  ``as_of``. It goes to ``arena markets record`` datasets instead, where venue time is the rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy import ColumnElement, Engine, func, or_
from sqlalchemy.orm import aliased, defer
from sqlmodel import Session, col, select

from arena.core.clock import ensure_utc
from arena.db.engine import session_scope
from arena.db.market_rows import (
    chunks,
    is_latest,
    latest_keys,
    latest_snapshots,
    market_from_row,
    resolution_from_row,
    snapshot_from_row,
)
from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow
from arena.db.types import decimals_from_json
from markets.manifold.parse import BETS_SOURCE, PROB_SOURCE
from markets.manifold.parse import CLOSED_SOURCE as MANIFOLD_CLOSED_SOURCE
from markets.polymarket.clob import CLOB_HISTORY_SOURCE, CLOB_MID_SOURCE
from markets.polymarket.gamma import CLOSED_SOURCE as GAMMA_CLOSED_SOURCE
from markets.types import Market, MarketSnapshot, PriceSnapshot, Resolution, SnapshotEntry, Venue

ACCOUNTING_SOURCES = {Venue.POLYMARKET: CLOB_MID_SOURCE, Venue.MANIFOLD: PROB_SOURCE}
HISTORY_SOURCES = {Venue.POLYMARKET: CLOB_HISTORY_SOURCE, Venue.MANIFOLD: BETS_SOURCE}
CLOSED_SOURCES = {Venue.POLYMARKET: GAMMA_CLOSED_SOURCE, Venue.MANIFOLD: MANIFOLD_CLOSED_SOURCE}


class DbMarketSource:
    def __init__(
        self,
        engine: Engine,
        venues: Sequence[Venue] = (Venue.POLYMARKET, Venue.MANIFOLD),
        *,
        max_price_age: timedelta = timedelta(hours=6),
        history_points: int = 30,
        history_window: timedelta = timedelta(days=30),
    ) -> None:
        if history_points < 1:
            raise ValueError(f"history_points must be >= 1, got {history_points}")
        self._engine = engine
        self._venues = [v.value for v in venues]
        self._accounting = [ACCOUNTING_SOURCES[v] for v in venues]
        self._closed = [CLOSED_SOURCES[v] for v in venues]
        self._max_price_age = max_price_age
        self._history_points = history_points
        self._history_window = history_window

    def open_markets(self, as_of: datetime) -> list[Market]:
        as_of = ensure_utc(as_of)
        with session_scope(self._engine, write=False) as session:
            return [market for market, _ in self._open(session, as_of)]

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        as_of = ensure_utc(as_of)
        with session_scope(self._engine, write=False) as session:
            found = latest_snapshots(session, list(market_ids), sources=self._accounting, as_of=as_of)
        return {snap.market_id: snap for snap in found}

    def resolutions(self, as_of: datetime) -> list[Resolution]:
        as_of = ensure_utc(as_of)
        with session_scope(self._engine, write=False) as session:
            rows = session.exec(
                select(ResolutionRow)
                .join(MarketRow, col(MarketRow.id) == col(ResolutionRow.market_id))
                .where(col(MarketRow.venue).in_(self._venues), *_known_by(as_of))
            ).all()
            resolved = [resolution_from_row(row) for row in rows]
        return sorted(resolved, key=lambda r: (r.resolved_at, r.market_id))

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        as_of = ensure_utc(as_of)
        with session_scope(self._engine, write=False) as session:
            open_now = self._open(session, as_of)
            histories = self._histories(session, [m for m, _ in open_now], as_of)
        entries = tuple(
            SnapshotEntry(market=m, price=price, history=histories.get(m.market_id, ()))
            for m, price in open_now
        )
        return MarketSnapshot(as_of=as_of, entries=entries)

    def _open(self, session: Session, as_of: datetime) -> list[tuple[Market, PriceSnapshot]]:
        keys = latest_keys(sources=self._accounting, as_of=as_of, since=as_of - self._max_price_age)
        resolved = select(ResolutionRow.market_id).where(*_known_by(as_of))
        seen_closed = aliased(MarketSnapshotRow)
        closed_since_price = (
            select(seen_closed.id)
            .where(
                seen_closed.market_id == MarketSnapshotRow.market_id,
                col(seen_closed.source).in_(self._closed),
                seen_closed.observed_at >= MarketSnapshotRow.observed_at,
                seen_closed.observed_at <= as_of,
            )
            .exists()
        )
        query = (
            select(MarketRow, MarketSnapshotRow)
            .join(MarketSnapshotRow, col(MarketSnapshotRow.market_id) == col(MarketRow.id))
            .join(keys, is_latest(keys))
            .where(
                col(MarketRow.venue).in_(self._venues),
                col(MarketRow.id).not_in(resolved),
                ~closed_since_price,
                _before_close(as_of),
            )
            .options(defer(MarketRow.raw_json))
        )
        found = [(_as_known(market_from_row(m), as_of), snapshot_from_row(s)) for m, s in session.exec(query)]
        return sorted(found, key=lambda pair: pair[0].market_id)

    def _histories(
        self, session: Session, markets: list[Market], as_of: datetime
    ) -> dict[str, tuple[tuple[datetime, Decimal], ...]]:
        """Last ``history_points`` first-outcome accounting prices per market, oldest first."""
        first = {m.market_id: m.outcomes[0] for m in markets}
        points: dict[str, list[tuple[datetime, Decimal]]] = {}
        for part in chunks(list(first)):
            for row_id, market_id, observed_at, prices_json in session.exec(self._recent(part, as_of)):
                prices = decimals_from_json(prices_json, field=f"market_snapshot {row_id} prices_json")
                if first[market_id] in prices:
                    points.setdefault(market_id, []).append((observed_at, prices[first[market_id]]))
        return {market_id: tuple(sorted(found)) for market_id, found in points.items()}

    def _recent(self, market_ids: Sequence[str], as_of: datetime) -> Any:
        """The newest ``history_points`` accounting snapshots of each market within the window,
        as plain columns: only the markets asked about, and never their raw payloads."""
        rank = func.row_number().over(
            partition_by=MarketSnapshotRow.market_id, order_by=col(MarketSnapshotRow.observed_at).desc()
        )
        recent = (
            sa.select(  # sqlalchemy's select: sqlmodel's is typed for at most four columns
                col(MarketSnapshotRow.id),
                col(MarketSnapshotRow.market_id),
                col(MarketSnapshotRow.observed_at),
                col(MarketSnapshotRow.prices_json),
                rank.label("rank"),
            )
            .where(
                col(MarketSnapshotRow.market_id).in_(market_ids),
                col(MarketSnapshotRow.source).in_(self._accounting),
                col(MarketSnapshotRow.observed_at) <= as_of,
                col(MarketSnapshotRow.observed_at) >= as_of - self._history_window,
            )
            .subquery()
        )
        c = recent.c
        return select(c.id, c.market_id, c.observed_at, c.prices_json).where(c.rank <= self._history_points)


def _as_known(market: Market, as_of: datetime) -> Market:
    """An open market as served at ``as_of``: a stored close time at or before ``as_of`` was synced
    after it (``_before_close``), so it was not known then and is not served."""
    return replace(market, close_time=None) if market.is_closed(as_of) else market


def _before_close(as_of: datetime) -> Any:
    """The stored close time had not passed at ``as_of``, judged only if the row was known then."""
    return or_(
        col(MarketRow.close_time).is_(None),
        col(MarketRow.close_time) > as_of,
        col(MarketRow.updated_at) > as_of,
    )


def _known_by(as_of: datetime) -> tuple[ColumnElement[bool], ...]:
    """A stored resolution is known at ``as_of`` once both the venue and the arena had it."""
    return (col(ResolutionRow.resolved_at) <= as_of, col(ResolutionRow.detected_at) <= as_of)
