"""When a cohort is finished, and what keeps it from finishing.

A cohort completes when all its decision rounds are done AND every position is settled; an
all-hold cohort therefore completes after its last round, never after its first (a peer arena
closed a cohort with zero trades). Positions that wait for a resolution too long are listed in
a stale-market report, so a cohort never stays open forever silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import func, update
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.models import CohortRow, MarketRow, RoundRow
from arena.db.statuses import FINISHED_ROUND_STATUSES

if TYPE_CHECKING:  # a type only: the runtime imports every bettor and market source, which
    # `arena cohort list` (through ``arena.reports.overview``) never needs
    from arena.engine.runtime.cohort import CohortRuntime

ACTIVE_STATUSES = ("pending", "running")


def finished_rounds(session: Session, cohort_id: str) -> int:
    query = (
        select(func.count())
        .select_from(RoundRow)
        .where(RoundRow.cohort_id == cohort_id, col(RoundRow.status).in_(FINISHED_ROUND_STATUSES))
    )
    return int(session.exec(query).one())


def open_positions(rt: CohortRuntime) -> int:
    return sum(len(s.book.ledger.open_positions()) for s in rt.agents)


def complete_if_done(rt: CohortRuntime, at: datetime) -> bool:
    """Mark the cohort completed if every round is done and nothing is left to settle."""
    if open_positions(rt):
        return False
    with session_scope(rt.engine) as session:
        if finished_rounds(session, rt.cohort_id) < rt.planned_rounds():
            return False
        stmt = (
            update(CohortRow)
            .where(col(CohortRow.id) == rt.cohort_id, col(CohortRow.status).in_(ACTIVE_STATUSES))
            .values(status="completed", finished_at=at)
        )
        session.execute(stmt)
    return True


@dataclass(frozen=True, slots=True)
class StalePosition:
    agent: str
    position_id: str
    market_id: str
    waiting_since: datetime
    reason: str

    def describe(self, at: datetime) -> str:
        days = (at - self.waiting_since).days
        return f"{self.agent}: {self.position_id} waiting {days} days ({self.reason})"


def stale_positions(rt: CohortRuntime, at: datetime) -> list[StalePosition]:
    """Open positions that have waited too long for a resolution (see ``waiting_since``)."""
    limit = timedelta(days=rt.config.marks.stale_after_days)
    held = {p.market_id for s in rt.agents for p in s.book.ledger.open_positions()}
    with session_scope(rt.engine, write=False) as session:
        closes = dict(
            session.exec(select(MarketRow.id, MarketRow.close_time).where(col(MarketRow.id).in_(held))).all()
        )
    found: list[StalePosition] = []
    for slot in rt.agents:
        for p in slot.book.ledger.open_positions():
            stale = waiting_since(closes.get(p.market_id), p.mark.at if p.mark else None, at, limit)
            if stale is not None:
                found.append(StalePosition(slot.name, p.position_id, p.market_id, *stale))
    return found


def waiting_since(
    close_time: datetime | None, last_price_at: datetime | None, now: datetime, limit: timedelta
) -> tuple[datetime, str] | None:
    """Since when, and why, a position is stale: its market closed (or it last had a real price)
    longer than ``limit`` before ``now`` without a resolution; None if it is not stale."""
    since: datetime | None
    if close_time is not None and close_time < now:
        since, reason = close_time, "market closed, no resolution"
    else:
        since, reason = last_price_at, "no price since"
    return (since, reason) if since is not None and now - since > limit else None
