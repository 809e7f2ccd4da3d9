"""Skipping markets a re-sync would not write anyway, before parsing, reading back or writing them.

Deciding "nothing changed" field by field costs nearly as much as the first sync: every payload
parsed into markets and prices, every stored market row and latest snapshot read back and
compared. Instead each observation carries a *stamp*, a digest of the venue answers it was built
from (Polymarket: the Gamma payload, then the CLOB midpoints and books of its tokens; Manifold:
the market payload), and the market row keeps the stamp of its last sync. The stamps of every
tracked market are read once, with the list of tracked markets, at the start of a sync. An open
market whose stamp is unchanged would produce the same row and the same prices, so the collector
drops it before building anything from it, unless one of its price sources is due a heartbeat
(``refresh_after``): that is one query, on the snapshots of
the last ``refresh_after`` only. Closed markets always take the full path: whether they are resolved may
depend on time passing as well as on the payload.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from arena.db.market_rows import chunks
from arena.db.models import MarketRow, MarketSnapshotRow
from arena.db.one_of import pg_any


def stamp(*answers: Any) -> str:
    """Digest of venue answers (JSON values; decimals and other scalars by their text)."""
    return digest(json.dumps(answers, separators=(",", ":"), default=str))


def digest(text: str | bytes) -> str:
    """32 hex digits that differ when ``text`` does (128 bits: a collision would hide a change);
    a text and its UTF-8 bytes have the same digest."""
    data = text.encode() if isinstance(text, str) else text
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def recently_priced(
    session: Session, market_ids: Sequence[str], sources: Sequence[str], since: datetime
) -> set[str]:
    """Markets of ``market_ids`` with a snapshot from each of ``sources`` observed after ``since``
    (none of them is due a heartbeat). Reads only snapshots newer than ``since``, through the
    (market, source, time) index, so the cost does not grow with a market's price history."""
    found: set[str] = set()
    for among in _among(session, col(MarketSnapshotRow.market_id), market_ids):
        query = (
            sa.select(col(MarketSnapshotRow.market_id))
            .where(
                among, col(MarketSnapshotRow.source).in_(sources), col(MarketSnapshotRow.observed_at) > since
            )
            .group_by(col(MarketSnapshotRow.market_id))
            .having(sa.func.count(sa.distinct(col(MarketSnapshotRow.source))) == len(set(sources)))
        )
        found.update(session.connection().execute(query).scalars().all())
    return found


def _among(session: Session, column: Any, values: Sequence[str]) -> list[sa.ColumnElement[bool]]:
    """``column`` is one of ``values``, as one parameter: on PostgreSQL an array (``= ANY``), on
    SQLite a JSON array read by ``json_each``; either binds and plans 10,000 ids in a fraction of
    the time ``IN`` with one parameter each takes. Elsewhere ``IN``, in slices small enough for any
    backend's limit on parameters."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        return [column == pg_any(column, values)]
    if dialect == "sqlite":
        listed = sa.select(sa.column("value", sa.String)).select_from(
            sa.func.json_each(json.dumps(list(values)))
        )
        return [column.in_(listed.scalar_subquery())]
    return [column.in_(part) for part in chunks(values)]


def write_stamps(session: Session, stamps: Mapping[str, str]) -> None:
    """Store new stamps of markets already in the table (one statement for all)."""
    if stamps:
        table = MarketRow.__table__  # type: ignore[attr-defined]
        statement = (
            sa.update(table)
            .where(table.c.id == sa.bindparam("market_id"))
            .values(sync_stamp=sa.bindparam("stamp"))
        )
        session.execute(statement, [{"market_id": m, "stamp": s} for m, s in stamps.items()])
