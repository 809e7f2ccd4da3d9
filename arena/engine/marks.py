"""Marking to market: every open position valued from the latest real prices as of t.

Positions in markets that closed but are not resolved yet are still marked (from their last
price); a position with no fresh price keeps its last mark flagged stale, and one never priced
is valued at cost, also stale (``portfolio.valuation``). Each mark writes one
``portfolio_snapshot`` per agent, with realised and unrealised P/L kept apart.

Marks are idempotent per time bucket (the cohort's mark cadence, counted from its start): a
second run in the same bucket, or after a crash, writes nothing new.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

from sqlmodel import Session, col, select

from arena.db.models import PortfolioCloseRow, PortfolioSnapshotRow
from arena.db.upsert import insert_ignore, upsert
from arena.engine.ledger_store import lock_and_check, position_row, write_positions
from arena.engine.runtime import CohortRuntime
from arena.engine.views import held_markets, latest_prices
from portfolio import Valuation


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
    return [snapshot_row(s.id, rt.cohort_id, s.book.ledger.mark(prices, at)) for s in slots]


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
        "open_positions": len(v.positions),
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
        upsert(session, PortfolioSnapshotRow, rows, on=["agent_id", "marked_at"])
    elif rows:
        insert_ignore(session, PortfolioSnapshotRow, rows, on=["agent_id", "marked_at"])
    record_closes(session, rows)
    write_positions(
        session, [position_row(s.id, p, at=at) for s in slots for p in s.book.ledger.open_positions()]
    )


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
    upsert(session, PortfolioCloseRow, closes, on=["agent_id", "day"], if_greater="closed_at")


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
