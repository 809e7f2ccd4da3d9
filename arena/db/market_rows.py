"""Stored markets, price snapshots and resolutions: domain objects to rows and back, idempotent writes.

Shared by the live sync (writes), the database-backed market source (reads) and the replay
export. Writes never commit (the caller's unit of work does) and are keyed on the tables'
unique constraints, so a re-run or a second process cannot duplicate a market, a snapshot or a
resolution. Decimals travel through JSON columns as exact strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Subquery, and_, func
from sqlmodel import Session, col, select

from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow
from arena.db.types import MONEY_SCALE, decimals_from_json, decimals_to_json
from arena.db.upsert import insert_ignore, upsert
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue

_MONEY_QUANTUM = Decimal(1).scaleb(-MONEY_SCALE)
# Market columns compared to decide whether a sync rewrites a row (the raw payload is not: a row
# is rewritten when what was parsed from it changed, and then the new raw is stored with it).
MARKET_CONTENT_COLUMNS = (
    "question",
    "description",
    "outcomes_json",
    "open_time",
    "close_time",
    "category",
    "volume",
    "liquidity",
    "url",
    "token_ids_json",
    "venue_status",
)
# Market columns a sync refreshes; ``first_seen_at`` is set once, on insert.
MARKET_UPDATE_COLUMNS = (*MARKET_CONTENT_COLUMNS, "raw_json", "sync_stamp", "updated_at")


def market_row(
    market: Market, raw: Mapping[str, Any], seen_at: datetime, *, status: str | None = None
) -> dict[str, Any]:
    """Column values of a market as synced at ``seen_at`` (volumes rounded to the column's 1e-6),
    ``status`` being the venue's state of it then (``MarketRow.venue_status``)."""
    return {
        "id": market.market_id,
        "venue": market.venue.value,
        "venue_id": market.venue_id,
        "question": market.question,
        "description": market.description,
        "outcomes_json": list(market.outcomes),
        "open_time": market.open_time,
        "close_time": market.close_time,
        "resolution_time": market.resolution_time,
        "category": market.category,
        "volume": _money(market.volume),
        "liquidity": _money(market.liquidity),
        "url": market.url,
        "token_ids_json": dict(market.token_ids),
        "raw_json": dict(raw),
        "first_seen_at": seen_at,
        "updated_at": seen_at,
        "venue_status": status,
    }


def market_from_row(row: MarketRow) -> Market:
    return Market(
        venue=Venue(row.venue),
        venue_id=row.venue_id,
        question=row.question,
        outcomes=tuple(row.outcomes_json),
        description=row.description,
        open_time=row.open_time,
        close_time=row.close_time,
        resolution_time=row.resolution_time,
        category=row.category,
        volume=row.volume,
        liquidity=row.liquidity,
        url=row.url,
        token_ids=dict(row.token_ids_json),
    )


def snapshot_row(snapshot: PriceSnapshot, raw: Any) -> dict[str, Any]:
    return {
        "market_id": snapshot.market_id,
        "source": snapshot.source,
        "observed_at": snapshot.observed_at,
        "prices_json": decimals_to_json(snapshot.prices),
        "bids_json": decimals_to_json(snapshot.bids),
        "asks_json": decimals_to_json(snapshot.asks),
        "raw_json": raw,
    }


def snapshot_from_row(row: MarketSnapshotRow) -> PriceSnapshot:
    where = f"market_snapshot {row.id}"
    return PriceSnapshot(
        market_id=row.market_id,
        prices=decimals_from_json(row.prices_json, field=f"{where} prices_json"),
        observed_at=row.observed_at,
        source=row.source,
        bids=decimals_from_json(row.bids_json, field=f"{where} bids_json"),
        asks=decimals_from_json(row.asks_json, field=f"{where} asks_json"),
        raw_ref=f"market_snapshot:{row.id}",
    )


def resolution_row(resolution: Resolution, detected_at: datetime, raw: Any) -> dict[str, Any]:
    return {
        "market_id": resolution.market_id,
        "kind": resolution.kind.value,
        "payouts_json": decimals_to_json(resolution.payouts),
        "resolved_at": resolution.resolved_at,
        "detected_at": detected_at,
        "source": resolution.source,
        "raw_json": raw,
    }


def resolution_from_row(row: ResolutionRow) -> Resolution:
    """The stored resolution, effective from when the arena knew it: max(venue time, detection).

    A resolution cannot act before the arena learned of it, or a replay of stored data would
    settle markets that the live rounds, at that time, still saw open.
    """
    return Resolution(
        market_id=row.market_id,
        kind=ResolutionKind(row.kind),
        payouts=decimals_from_json(row.payouts_json, field=f"resolution {row.id} payouts_json"),
        resolved_at=max(row.resolved_at, row.detected_at),
        source=row.source,
    )


@dataclass(frozen=True, slots=True)
class Stored:
    """What the database holds for one market, for change detection during a sync."""

    row: dict[str, Any]  # the MARKET_CONTENT_COLUMNS
    latest: Mapping[str, PriceSnapshot]  # by source
    resolved: bool
    stamp: str | None = None  # ``sync_stamp``: digest of the answers the last sync built it from
    # An operator's resolution whose venue answer no sync has seen yet (``resolution.venue_answer_json``).
    override: Resolution | None = None


def load_stored(session: Session, market_ids: Sequence[str]) -> dict[str, Stored]:
    """Stored content, latest snapshot per source and resolution flag for one batch of markets.

    Columns are selected explicitly (no ORM objects, no raw payloads): this runs for every
    market of every sync, so it is the hot path of a re-sync.
    """
    if not market_ids:
        return {}
    content = [getattr(MarketRow, c) for c in MARKET_CONTENT_COLUMNS]
    rows = session.exec(
        select(MarketRow.id, MarketRow.sync_stamp, *content).where(col(MarketRow.id).in_(market_ids))
    ).all()
    resolutions = session.exec(
        select(ResolutionRow.market_id, ResolutionRow.source).where(
            col(ResolutionRow.market_id).in_(market_ids)
        )
    ).all()
    resolved = {market_id for market_id, _ in resolutions}
    overrides = awaiting_venue_answers(session, [m for m, source in resolutions if source == OPERATOR])
    latest: dict[str, dict[str, PriceSnapshot]] = {}
    for snapshot in _latest_light(session, market_ids):
        latest.setdefault(snapshot.market_id, {})[snapshot.source] = snapshot
    return {
        market_id: Stored(
            dict(zip(MARKET_CONTENT_COLUMNS, values, strict=True)),
            latest.get(market_id, {}),
            market_id in resolved,
            stamp,
            overrides.get(market_id),
        )
        for market_id, stamp, *values in rows
    }


OPERATOR = "operator"  # ``resolution.source`` of a resolution set by hand (``arena markets resolve``)


def awaiting_venue_answers(session: Session, market_ids: Sequence[str]) -> dict[str, Resolution]:
    """Of ``market_ids``, those resolved by an operator whose venue answer no sync has seen yet,
    with the operator's resolution. (Read in Python: a JSON column's null has two spellings.)"""
    if not market_ids:
        return {}
    rows = session.exec(
        select(ResolutionRow).where(
            col(ResolutionRow.market_id).in_(market_ids), ResolutionRow.source == OPERATOR
        )
    ).all()
    return {row.market_id: resolution_from_row(row) for row in rows if row.venue_answer_json is None}


def _latest_light(session: Session, market_ids: Sequence[str]) -> list[PriceSnapshot]:
    """The newest snapshot per source of each market, read as plain columns (no raw payload)."""
    keys = latest_keys(sources=None, as_of=None, market_ids=market_ids)
    columns = (
        col(MarketSnapshotRow.market_id),
        col(MarketSnapshotRow.source),
        col(MarketSnapshotRow.observed_at),
        col(MarketSnapshotRow.prices_json),
        col(MarketSnapshotRow.bids_json),
        col(MarketSnapshotRow.asks_json),
    )
    found = []
    # sqlalchemy's select: sqlmodel's is typed for at most four columns
    for market_id, source, observed_at, prices, bids, asks in session.execute(
        sa.select(*columns).join(keys, is_latest(keys))
    ):
        where = f"latest {source} snapshot of {market_id}"
        found.append(
            PriceSnapshot(
                market_id,
                decimals_from_json(prices, field=f"{where}: prices_json"),
                observed_at,
                source,
                bids=decimals_from_json(bids, field=f"{where}: bids_json"),
                asks=decimals_from_json(asks, field=f"{where}: asks_json"),
            )
        )
    return found


def latest_keys(
    *,
    sources: Sequence[str] | None,
    as_of: datetime | None,
    since: datetime | None = None,
    market_ids: Sequence[str] | None = None,
) -> Subquery:
    """(market_id, source, observed_at) of the newest snapshot per market and source, at or
    before ``as_of`` (None: the newest of all) and not older than ``since``."""
    newest = select(
        MarketSnapshotRow.market_id,
        MarketSnapshotRow.source,
        func.max(MarketSnapshotRow.observed_at).label("observed_at"),
    )
    if sources is not None:
        newest = newest.where(col(MarketSnapshotRow.source).in_(sources))
    if market_ids is not None:
        newest = newest.where(col(MarketSnapshotRow.market_id).in_(market_ids))
    if as_of is not None:
        newest = newest.where(col(MarketSnapshotRow.observed_at) <= as_of)
    if since is not None:
        newest = newest.where(col(MarketSnapshotRow.observed_at) >= since)
    return newest.group_by(MarketSnapshotRow.market_id, MarketSnapshotRow.source).subquery()


def is_latest(keys: Subquery) -> Any:
    """Join condition of ``market_snapshot`` onto ``latest_keys``."""
    return and_(
        col(MarketSnapshotRow.market_id) == keys.c.market_id,
        col(MarketSnapshotRow.source) == keys.c.source,
        col(MarketSnapshotRow.observed_at) == keys.c.observed_at,
    )


def latest_snapshots(
    session: Session,
    market_ids: Sequence[str],
    *,
    sources: Sequence[str] | None,
    as_of: datetime | None,
) -> list[PriceSnapshot]:
    """The newest snapshot per (market, source) of ``market_ids`` at or before ``as_of``."""
    found: list[PriceSnapshot] = []
    for part in chunks(market_ids):
        keys = latest_keys(sources=sources, as_of=as_of, market_ids=part)
        found.extend(
            snapshot_from_row(row)
            for row in session.exec(select(MarketSnapshotRow).join(keys, is_latest(keys)))
        )
    return found


def chunks(items: Sequence[str], size: int = 900) -> list[Sequence[str]]:
    """Slices small enough for any backend's limit on bound parameters per statement."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def tracked_markets(
    session: Session, venue: Venue, sources: Sequence[str]
) -> dict[str, tuple[str, str | None]]:
    """Unresolved markets of ``venue`` that a sync observed (a snapshot from one of its
    ``sources``): market id -> (venue id, sync stamp), in one query; and those an operator
    resolved whose venue answer no sync has seen yet (so a contradiction gets reported).

    They keep being refreshed even after they drop out of the top-N, because agents may hold
    them. Market rows written by anything else (e.g. a replay cohort's markets) are not tracked.
    """
    observed = select(MarketSnapshotRow.id).where(
        MarketSnapshotRow.market_id == MarketRow.id, col(MarketSnapshotRow.source).in_(sources)
    )
    unresolved = col(ResolutionRow.id).is_(None)
    query = (
        sa.select(col(MarketRow.id), col(MarketRow.venue_id), col(MarketRow.sync_stamp), unresolved)
        .outerjoin(ResolutionRow, col(ResolutionRow.market_id) == col(MarketRow.id))
        .where(
            col(MarketRow.venue) == venue.value,
            unresolved | (col(ResolutionRow.source) == OPERATOR),
            observed.exists(),
        )
    )
    # Through the connection: plain rows, without the ORM's result machinery (every market, every sync).
    rows = session.connection().execute(query).all()  # one fetchall, not a fetchone per market
    overridden = awaiting_venue_answers(session, [m for m, _, _, open_ in rows if not open_])
    return {
        market_id: (venue_id, stamp)
        for market_id, venue_id, stamp, open_ in rows
        if open_ or market_id in overridden
    }


def existing_markets(session: Session, market_ids: Sequence[str]) -> set[str]:
    """Which of ``market_ids`` are stored."""
    found: set[str] = set()
    for part in chunks(market_ids):
        found.update(session.exec(select(MarketRow.id).where(col(MarketRow.id).in_(part))).all())
    return found


def stored_raw(session: Session, market_ids: Iterable[str]) -> dict[str, Any]:
    """The last raw venue payload of each market (e.g. to find Polymarket's Gamma id)."""
    ids = list(market_ids)
    if not ids:
        return {}
    query = select(MarketRow.id, MarketRow.raw_json).where(col(MarketRow.id).in_(ids))
    return dict(session.exec(query).all())


def write_markets(session: Session, rows: Sequence[dict[str, Any]]) -> int:
    return upsert(session, MarketRow, rows, on=["id"], update=MARKET_UPDATE_COLUMNS) if rows else 0


def write_snapshots(session: Session, rows: Sequence[dict[str, Any]]) -> int:
    return (
        insert_ignore(session, MarketSnapshotRow, rows, on=["market_id", "source", "observed_at"])
        if rows
        else 0
    )


def write_resolutions(session: Session, rows: Sequence[dict[str, Any]], *, count: bool = True) -> int:
    """Insert new resolutions; an existing one (e.g. a manual override) is never replaced. Returns
    how many were new, or 0 with ``count=False`` (a replay's and a settlement's writes, which do
    not read it: one executemany without RETURNING, as ``insert_ignore`` says)."""
    return insert_ignore(session, ResolutionRow, rows, on=["market_id"], count=count) if rows else 0


def _money(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(_MONEY_QUANTUM, rounding=ROUND_HALF_EVEN)


def recorded_data(
    session: Session, venues: Sequence[Venue], accounting: Sequence[str], history: Sequence[str]
) -> tuple[list[Market], list[PriceSnapshot], list[Resolution]]:
    """Everything sync stored for ``venues``, shaped for a replay dataset.

    Prices: every accounting snapshot, plus backfilled history for binary markets (a replay may
    give a binary market its YES price alone). An accounting price wins a tie in time. Markets
    without any price are left out (a replay market opens at its first price).
    """
    names = [v.value for v in venues]
    rows = session.exec(select(MarketRow).where(col(MarketRow.venue).in_(names))).all()
    markets = {r.id: market_from_row(r) for r in rows}
    snapshots = session.exec(
        select(MarketSnapshotRow)
        .join(MarketRow, col(MarketRow.id) == col(MarketSnapshotRow.market_id))
        .where(col(MarketRow.venue).in_(names), col(MarketSnapshotRow.source).in_([*accounting, *history]))
    ).all()
    prices: dict[tuple[str, datetime], PriceSnapshot] = {}
    for row in snapshots:
        is_accounting = row.source in accounting
        if not is_accounting and not markets[row.market_id].is_binary:
            continue
        key = (row.market_id, row.observed_at)
        if key not in prices or is_accounting:
            prices[key] = snapshot_from_row(row)
    priced = {market_id for market_id, _ in prices}
    resolutions = session.exec(
        select(ResolutionRow)
        .join(MarketRow, col(MarketRow.id) == col(ResolutionRow.market_id))
        .where(col(MarketRow.venue).in_(names))
    ).all()
    return (
        [m for market_id, m in markets.items() if market_id in priced],
        list(prices.values()),
        [resolution_from_row(r) for r in resolutions if r.market_id in priced],
    )
