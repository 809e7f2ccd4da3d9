"""Storing a round and its snapshot: the markets offered and the exact prices every agent saw."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import Engine, bindparam
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.market_rows import market_row
from arena.db.models import MarketRow, RoundMarketRow, RoundRow
from arena.db.one_of import one_of
from arena.db.pipeline import read_after_sent
from arena.db.types import decimals_to_json
from arena.db.upsert import insert_ignore
from markets.types import Market, MarketSnapshot
from portfolio import MarketId

# Statements read at every round, built once: a statement object keeps its cache key, and building
# and keying one cost about as much CPU as running it on SQLite.
ROUND_AT_INDEX = select(RoundRow).where(
    col(RoundRow.cohort_id) == bindparam("cohort_id"), col(RoundRow.round_index) == bindparam("index")
)
"""A cohort's round by index (parameters ``cohort_id``, ``index``)."""
_OPENED = sa_select(col(RoundRow.id), col(RoundRow.snapshot_hash), col(RoundRow.scheduled_at)).where(
    col(RoundRow.cohort_id) == bindparam("cohort_id"), col(RoundRow.round_index) == bindparam("index")
)
"""What ``open_round`` checks of the round it opened or found."""


class SnapshotChanged(RuntimeError):
    """A re-run of a round saw a different snapshot than the first run: agents would not share it."""


def ensure_markets(session: Session, markets: list[Market], at: datetime) -> None:
    """Store markets the cohort touches (fills and positions reference them); existing rows, e.g.
    kept fresh by the live sync, are left alone."""
    if markets:
        rows = [market_row(m, {}, at) for m in markets]
        # any_key: two runners of one round may store the same markets at once.
        insert_ignore(session, MarketRow, rows, on=["id"], any_key=True, count=False)


def open_round(
    session: Session,
    cohort_id: str,
    index: int,
    at: datetime,
    snapshot: MarketSnapshot,
    *,
    started_at: datetime,
) -> int:
    """Create round ``index`` with its snapshot (or find it, checking it saw the same snapshot);
    ``started_at`` is when it really started (``at`` itself in a replay)."""
    digest = snapshot.content_hash()
    ensure_markets(session, [e.market for e in snapshot.entries], at)
    new = dict(
        cohort_id=cohort_id, round_index=index, scheduled_at=at, status="running", started_at=started_at
    )
    new.update(snapshot_hash=digest, market_count=len(snapshot.entries))
    insert_ignore(session, RoundRow, [new], on=["cohort_id", "round_index"], count=False)
    # read back in the pipeline of the inserts above: one wait for both (``read_after_sent``)
    ((opened,),) = read_after_sent(session, [(_OPENED, {"cohort_id": cohort_id, "index": index})])
    round_id, stored, scheduled_at = opened
    if stored != digest or scheduled_at != at:
        raise SnapshotChanged(
            f"cohort {cohort_id} round {index}: stored snapshot {stored} "
            f"at {scheduled_at.isoformat()} "
            f"but this run sees {digest} at {at.isoformat()}; refusing to give agents different markets"
        )
    _store_prices(session, round_id, snapshot)
    return int(round_id)


def _store_prices(session: Session, round_id: int, snapshot: MarketSnapshot) -> None:
    rows = [
        {
            "round_id": round_id,
            "market_id": e.market.market_id,
            "source": e.price.source,
            "observed_at": e.price.observed_at,
            "prices_json": decimals_to_json(e.price.prices),
        }
        for e in snapshot.entries
    ]
    if rows:
        insert_ignore(session, RoundMarketRow, rows, on=["round_id", "market_id"], count=False)


def market_questions(engine: Engine, market_ids: Collection[str]) -> dict[str, str]:
    """Questions of markets agents hold, which may have left the round's snapshot (closed markets)."""
    if not market_ids:
        return {}
    with session_scope(engine, write=False) as session:
        among = one_of(session, col(MarketRow.id), sorted(market_ids))
        rows = session.exec(select(MarketRow.id, MarketRow.question).where(among)).all()
    return dict(rows)


def closed_by(engine: Engine, market_ids: Collection[str], at: datetime) -> dict[MarketId, datetime]:
    """Of ``market_ids``, the stored markets whose close time is at or before ``at``, with it."""
    if not market_ids:
        return {}
    with session_scope(engine, write=False) as session:
        among = one_of(session, col(MarketRow.id), sorted(market_ids))
        rows = session.exec(select(MarketRow.id, MarketRow.close_time).where(among)).all()
    return {MarketId(m): close for m, close in rows if close is not None and close <= at}
