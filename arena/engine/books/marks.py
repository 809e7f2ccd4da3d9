"""Marking to market: every open position valued from the latest real prices as of t.

Positions in markets that closed but are not resolved yet are still marked (from their last
price); a position with no fresh price keeps its last mark flagged stale, and one never priced
is valued at cost, also stale (``portfolio.valuation``). Each mark writes one
``portfolio_snapshot`` per agent, with realised and unrealised P/L kept apart, and the new mark
of each open position whose mark moved (its row's ``updated_at`` says when it last did).

Marks are idempotent per time bucket (the cohort's mark cadence, counted from its start): a
second run in the same bucket, or after a crash, writes nothing new.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Dialect
from sqlmodel import Session, col, select

from arena.db.keyed_update import update_by_key
from arena.db.models import PortfolioCloseRow, PortfolioSnapshotRow, PositionRow
from arena.db.upsert import column_processors, insert_ignore, upsert
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.runtime.views import held_markets, latest_prices
from arena.engine.store.ledger_store import AgentBook, lock_and_check, remember_marks
from portfolio import FreshMarks, Mark, Valuation


def bucket_start(start: datetime, every: timedelta, at: datetime) -> datetime:
    """The start of the mark bucket holding ``at`` on the grid ``start + k × every``."""
    return start + every * ((at - start) // every)


def mark_rows(
    rt: CohortRuntime, at: datetime, agent_ids: Sequence[int] | None = None
) -> list[dict[str, object]]:
    """Re-mark the in-memory ledgers at ``at`` and return their portfolio_snapshot rows."""
    slots = [s for s in rt.agents if agent_ids is None or s.id in agent_ids]
    held = held_markets([s.book.ledger for s in slots])
    prices = latest_prices(rt.source, held, at, rt.config.prices.mark_max_age) if held else {}
    marks = FreshMarks(prices, at)  # one mark per market outcome, shared by every agent holding it
    return [snapshot_row(s.id, rt.cohort_id, s.book.ledger.mark(marks, at)) for s in slots]


def snapshot_row(agent_id: int, cohort_id: str, v: Valuation) -> dict[str, object]:
    return {
        "agent_id": agent_id,
        "cohort_id": cohort_id,
        "marked_at": v.at,
        "cash": v.cash,
        "positions_value": v.positions_value,
        "total_value": v.total_value,
        "realized_pnl": v.realized_pnl,
        "unrealized_pnl": v.unrealized_pnl,
        "open_positions": len(v.open_positions),
        "stale_count": v.stale_count,
    }


def persist_marks(
    session: Session,
    rt: CohortRuntime,
    rows: Sequence[dict[str, object]],
    *,
    at: datetime,
    replace: bool = False,
) -> None:
    """Store snapshot rows and the current marks of open positions, fenced like any ledger write.

    ``replace`` overwrites snapshots already stored at the same instants (after an operator's
    settlement at a cohort's last mark); otherwise a stored snapshot is kept (re-runs are no-ops).
    """
    slots = [rt.slot(a) for a in sorted({int(str(r["agent_id"])) for r in rows})]
    lock_and_check(session, [s.book for s in slots])
    if rows and replace:
        upsert(session, PortfolioSnapshotRow, rows, on=["agent_id", "marked_at"], count=False)
    elif rows:
        insert_ignore(session, PortfolioSnapshotRow, rows, on=["agent_id", "marked_at"], count=False)
    record_closes(session, rows)
    write_marks(session, [s.book for s in slots], at=at)


def write_marks(session: Session, books: Sequence[AgentBook], *, at: datetime) -> None:
    """Store the mark of every open position whose mark moved since its row was last written
    (``AgentBook.stored_marks``); a stale position whose mark did not move is left alone.

    Only the mark columns change on a mark (fills write the rest), so one keyed UPDATE of those
    serves every row (``update_by_key``: one statement on PostgreSQL). A replay marks thousands of
    positions a day: the values go through the columns' own bind processors and straight to the
    driver, skipping SQLAlchemy's per-row parameter handling, which cost more than the writes."""
    moved = [
        (book, p)
        for book in books
        for p in book.ledger.open_positions()
        if _moved(book.stored_marks.get(p.position_id, _NEVER), p.mark)
    ]
    if not moved:
        return
    dialect = session.get_bind().dialect
    price, marked_at, stale, updated_at = _mark_processors(dialect)
    at_value = updated_at(at)
    # marks are shared by the positions marked at one instant (``FreshMarks``): each is processed once
    processed: dict[int, tuple[Any, Any, Any]] = {}
    params = []
    for book, p in moved:
        mark = p.mark
        values = processed.get(id(mark))
        if values is None:
            values = processed[id(mark)] = (
                (None, None, stale(True))
                if mark is None
                else (price(mark.price), marked_at(mark.at), stale(mark.stale))
            )
        params.append((*values, at_value, book.agent_id, p.position_id))
    table = PositionRow.__table__  # type: ignore[attr-defined]
    update_by_key(session, table, _MARK_COLUMNS, ("agent_id", "position_id"), params, count=False)
    remember_marks(session, [(book, p.position_id, p.mark) for book, p in moved])


_MARK_COLUMNS = ("last_price", "last_marked_at", "stale", "updated_at")


def _mark_processors(dialect: Dialect) -> tuple[Callable[[Any], Any], ...]:
    """The full bind processors (our exact types, then the dialect's) of the mark columns, in
    ``_MARK_COLUMNS``' order, so a mark stores exactly what an ORM write of the row would."""
    return column_processors(PositionRow.__table__, _MARK_COLUMNS, dialect)  # type: ignore[attr-defined]


_NEVER = object()  # no row written yet: differs from any mark


def _moved(stored: object, mark: Mark | None) -> bool:
    """Whether ``mark`` differs from the one stored (the same object, the common case, is checked first)."""
    return stored is not mark and stored != mark


def record_closes(session: Session, rows: Iterable[Mapping[str, object]]) -> None:
    """Make each snapshot row its agent's close of its UTC day unless a later mark of that day
    is already the close. Any writer of ``portfolio_snapshot`` rows calls this with them."""
    closes = [
        {
            "agent_id": row["agent_id"],
            "cohort_id": row["cohort_id"],
            "day": _utc(row["marked_at"]).date(),
            "closed_at": row["marked_at"],
        }
        for row in rows
    ]
    upsert(session, PortfolioCloseRow, closes, on=["agent_id", "day"], if_greater="closed_at", count=False)


def _utc(value: object) -> datetime:
    assert isinstance(value, datetime) and value.tzinfo is not None, f"marked_at must be aware: {value!r}"
    return value.astimezone(UTC)


def unmarked_agents(session: Session, rt: CohortRuntime, at: datetime) -> list[int]:
    """Agents without a snapshot in the bucket holding ``at`` (the live job marks only these)."""
    done = marked_in_bucket(session, rt.cohort_id, rt.start, rt.config.marks.every, at)
    return [s.id for s in rt.agents if s.id not in done]


def marked_in_bucket(
    session: Session, cohort_id: str, start: datetime, every: timedelta, at: datetime
) -> set[int]:
    """Agents of the cohort with a snapshot in the mark bucket holding ``at`` (grid from ``start``)."""
    first = bucket_start(start, every, at)
    return set(
        session.exec(
            select(PortfolioSnapshotRow.agent_id).where(
                PortfolioSnapshotRow.cohort_id == cohort_id,
                col(PortfolioSnapshotRow.marked_at) >= first,
                col(PortfolioSnapshotRow.marked_at) < first + every,
            )
        ).all()
    )
