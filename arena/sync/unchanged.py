"""Skipping markets a re-sync would not write anyway, before reading them back or writing.

Deciding "nothing changed" field by field costs nearly as much as the first sync: every stored
market row and latest snapshot read back and decoded, every field compared. Instead each
observation carries a *stamp*, a digest of the venue answers it was built from (Polymarket: the
Gamma payload and the CLOB midpoints and books of its tokens; Manifold: the market payload), and
the market row keeps the stamp of its last sync. An open market whose stamp is unchanged would
produce the same row and the same prices, so it is skipped unless one of its price sources is
due a heartbeat (``refresh_after``). Closed markets always take the full path: whether they are
resolved may depend on time passing as well as on the payload.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from arena.db.market_rows import chunks
from arena.db.models import MarketRow, MarketSnapshotRow


def stamp(*answers: Any) -> str:
    """Digest of venue answers (JSON values; decimals and other scalars by their text)."""
    text = json.dumps(answers, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stored_stamps(session: Session, market_ids: Sequence[str]) -> dict[str, str | None]:
    """The stamp of each stored market among ``market_ids`` (None: never stamped)."""
    found: dict[str, str | None] = {}
    for part in chunks(market_ids):
        query = sa.select(col(MarketRow.id), col(MarketRow.sync_stamp)).where(col(MarketRow.id).in_(part))
        found.update({market_id: value for market_id, value in session.execute(query)})
    return found


def skippable(
    session: Session,
    observed: Mapping[str, tuple[str, Sequence[tuple[str, datetime]]]],
    stamps: Mapping[str, str | None],
    refresh_after: timedelta,
) -> set[str]:
    """Markets of ``observed`` (id -> (stamp, (source, observed at) of each new snapshot)) a sync
    may skip: same stamp as stored, and every snapshot source's newest stored price younger than
    ``refresh_after`` at the new observation (older: a heartbeat is due, so the full path decides)."""
    same = [m for m, (now_stamp, _) in observed.items() if now_stamp and stamps.get(m) == now_stamp]
    newest = _newest(session, same)
    return {
        market_id
        for market_id in same
        if all(
            (previous := newest.get((market_id, source))) is not None and at - previous < refresh_after
            for source, at in observed[market_id][1]
        )
    }


def _newest(session: Session, market_ids: Sequence[str]) -> dict[tuple[str, str], datetime]:
    """Time of the newest stored snapshot per (market, source)."""
    found: dict[tuple[str, str], datetime] = {}
    for part in chunks(market_ids):
        query = (
            sa.select(
                col(MarketSnapshotRow.market_id),
                col(MarketSnapshotRow.source),
                sa.func.max(col(MarketSnapshotRow.observed_at)),
            )
            .where(col(MarketSnapshotRow.market_id).in_(part))
            .group_by(col(MarketSnapshotRow.market_id), col(MarketSnapshotRow.source))
        )
        found.update({(market_id, source): at for market_id, source, at in session.execute(query)})
    return found


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
