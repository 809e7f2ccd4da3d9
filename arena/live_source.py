"""``DbMarketSource``: the live ``MarketSource``, answering from what ``arena markets sync`` stored.

Live rounds read the database rather than the venues, so a round can be re-run and audited
exactly: every answer uses only rows stamped at or before ``as_of``.
- A price is the newest *accounting* snapshot (CLOB midpoint on Polymarket, probability on
  Manifold) observed at or before ``as_of``; Gamma comparison prices are never served.
- A resolution is known from max(venue ``resolved_at``, ``detected_at``): the arena cannot act on
  an outcome before it learned it.
- A market is open at ``as_of`` when sync saw it trading within ``max_price_age`` before (sync
  records accounting prices only for open markets, so a market that stopped trading drops out
  without anyone editing history), no resolution is known, and its close time has not passed.
  The close time is the market row's latest synced value (market metadata is not versioned).
- Snapshot histories are recent first-outcome points (accounting snapshots and backfilled
  history) within ``history_window``, oldest first, one per instant.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from sqlalchemy import Engine, and_, func, or_
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow
from arena.db.types import decimals_from_json
from arena.market_record import latest_snapshots, market_from_row, resolution_from_row
from markets.manifold.parse import BETS_SOURCE, PROB_SOURCE
from markets.polymarket.clob import CLOB_HISTORY_SOURCE, CLOB_MID_SOURCE
from markets.types import Market, MarketSnapshot, PriceSnapshot, Resolution, SnapshotEntry, Venue

ACCOUNTING_SOURCES = {Venue.POLYMARKET: CLOB_MID_SOURCE, Venue.MANIFOLD: PROB_SOURCE}
HISTORY_SOURCES = {Venue.POLYMARKET: CLOB_HISTORY_SOURCE, Venue.MANIFOLD: BETS_SOURCE}


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
        self._history_sources = self._accounting + [HISTORY_SOURCES[v] for v in venues]
        self._max_price_age = max_price_age
        self._history_points = history_points
        self._history_window = history_window

    def open_markets(self, as_of: datetime) -> list[Market]:
        as_of = _utc(as_of)
        with session_scope(self._engine, write=False) as session:
            return [market for market, _ in self._open(session, as_of)]

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        as_of = _utc(as_of)
        with session_scope(self._engine, write=False) as session:
            found = latest_snapshots(session, list(market_ids), sources=self._accounting, as_of=as_of)
        return {snap.market_id: snap for snap in found}

    def resolutions(self, as_of: datetime) -> list[Resolution]:
        as_of = _utc(as_of)
        with session_scope(self._engine, write=False) as session:
            rows = session.exec(
                select(ResolutionRow)
                .join(MarketRow, col(MarketRow.id) == col(ResolutionRow.market_id))
                .where(col(MarketRow.venue).in_(self._venues), *_known_by(as_of))
            ).all()
            resolved = [resolution_from_row(row) for row in rows]
        return sorted(resolved, key=lambda r: (r.resolved_at, r.market_id))

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        as_of = _utc(as_of)
        with session_scope(self._engine, write=False) as session:
            open_now = self._open(session, as_of)
            histories = self._histories(session, [m for m, _ in open_now], as_of)
        entries = tuple(
            SnapshotEntry(market=m, price=price, history=histories.get(m.market_id, ())) for m, price in open_now
        )
        return MarketSnapshot(as_of=as_of, entries=entries)

    def _open(self, session: Session, as_of: datetime) -> list[tuple[Market, PriceSnapshot]]:
        fresh = latest_snapshots(
            session, None, sources=self._accounting, as_of=as_of, since=as_of - self._max_price_age
        )
        prices = {snap.market_id: snap for snap in fresh}
        if not prices:
            return []
        resolved = select(ResolutionRow.market_id).where(*_known_by(as_of))
        rows = session.exec(
            select(MarketRow).where(
                col(MarketRow.id).in_(list(prices)),
                col(MarketRow.venue).in_(self._venues),
                col(MarketRow.id).not_in(resolved),
                or_(col(MarketRow.close_time).is_(None), col(MarketRow.close_time) > as_of),
            )
        ).all()
        return sorted(((market_from_row(r), prices[r.id]) for r in rows), key=lambda x: x[0].market_id)

    def _histories(
        self, session: Session, markets: list[Market], as_of: datetime
    ) -> dict[str, tuple[tuple[datetime, Decimal], ...]]:
        """Last ``history_points`` first-outcome points per market, accounting winning a tie in time."""
        first = {m.market_id: m.outcomes[0] for m in markets}
        if not first:
            return {}
        rank = func.row_number().over(
            partition_by=MarketSnapshotRow.market_id, order_by=col(MarketSnapshotRow.observed_at).desc()
        )
        recent = (
            select(MarketSnapshotRow, rank.label("rank"))
            .join(MarketRow, col(MarketRow.id) == col(MarketSnapshotRow.market_id))
            .where(
                col(MarketRow.venue).in_(self._venues),
                col(MarketSnapshotRow.source).in_(self._history_sources),
                and_(
                    col(MarketSnapshotRow.observed_at) <= as_of,
                    col(MarketSnapshotRow.observed_at) >= as_of - self._history_window,
                ),
            )
            .subquery()
        )
        rows = session.exec(select(recent).where(recent.c.rank <= 2 * self._history_points)).all()
        points: dict[str, dict[datetime, tuple[bool, Decimal]]] = {}
        for row in rows:
            outcome = first.get(row.market_id)
            prices = decimals_from_json(row.prices_json, field=f"market_snapshot {row.id} prices_json")
            if outcome is None or outcome not in prices:
                continue
            accounting = row.source in self._accounting
            slot = points.setdefault(row.market_id, {})
            when = row.observed_at if row.observed_at.tzinfo else row.observed_at.replace(tzinfo=UTC)
            if when not in slot or accounting:
                slot[when] = (accounting, prices[outcome])
        return {
            market_id: tuple((when, value) for when, (_, value) in sorted(slot.items()))[-self._history_points :]
            for market_id, slot in points.items()
        }


def _known_by(as_of: datetime) -> tuple[object, ...]:
    """A stored resolution is known at ``as_of`` once both the venue and the arena had it."""
    return (col(ResolutionRow.resolved_at) <= as_of, col(ResolutionRow.detected_at) <= as_of)


def _utc(as_of: datetime) -> datetime:
    if as_of.tzinfo is None:
        raise ValueError(f"naive datetime {as_of.isoformat()} has no time zone; use UTC")
    return as_of.astimezone(UTC)
