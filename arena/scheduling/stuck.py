"""Live cohorts that are stuck, for ``arena status``: a due round that does not get run, or a
position waiting for a resolution long after its market closed.

Cheap on purpose (a probe runs it every minute): the frozen configs, the finished rounds and one
query for the stale positions; no cohort runtime, no ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.cohorts.config import CohortConfig, config_from_frozen
from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    CohortRow,
    MarketRow,
    PositionRow,
    ResolutionRow,
    RoundRow,
)
from arena.db.statuses import FINISHED_ROUND_STATUSES

ROUNDS_RUN = ("pending", "running")  # a paused cohort runs no rounds: none of them is late
POSITIONS_HELD = (*ROUNDS_RUN, "paused")
# Past its time, a round gets this long (after its own budget) before it counts as stuck: the
# rounds job runs every minute by default, and a leader may just have changed.
ROUND_SLACK = timedelta(minutes=2)


@dataclass(frozen=True, slots=True)
class Stuck:
    cohort_id: str
    reason: str


def stuck_cohorts(engine: Engine, now: datetime, rounds_every: timedelta | None) -> list[Stuck]:
    """Each live cohort with a round overdue by more than its ``round_budget`` + ``call_timeout``
    + the rounds job's cadence (``rounds_every``, as recorded) + ``ROUND_SLACK``, or with open
    positions in markets closed longer than its ``marks.stale_after_days`` without a resolution."""
    found: list[Stuck] = []
    with session_scope(engine, write=False) as session:
        rows = session.exec(
            select(CohortRow.id, CohortRow.status, CohortRow.config_json).where(
                CohortRow.mode == "live", col(CohortRow.status).in_(POSITIONS_HELD)
            )
        ).all()
        for cohort_id, status, frozen in rows:
            config = config_from_frozen(frozen)
            if status in ROUNDS_RUN and (late := _late_round(session, cohort_id, config, now, rounds_every)):
                found.append(Stuck(cohort_id, late))
            if stale := _stale_positions(session, cohort_id, config, now):
                found.append(Stuck(cohort_id, stale))
    return found


def _late_round(
    session: Session, cohort_id: str, config: CohortConfig, now: datetime, rounds_every: timedelta | None
) -> str | None:
    """The oldest round past its time and its allowance that is not finished, said in a line."""
    if config.start is None:
        return None
    finished = set(
        session.exec(
            select(RoundRow.round_index).where(
                RoundRow.cohort_id == cohort_id, col(RoundRow.status).in_(FINISHED_ROUND_STATUSES)
            )
        ).all()
    )
    job = rounds_every or timedelta(minutes=1)
    allowance = config.round_budget + config.call_timeout + job + ROUND_SLACK
    every = config.schedule.every
    for index in range(config.schedule.rounds or 0):
        due = config.start + index * every
        if due > now - allowance:
            return None
        if index not in finished:
            late = int((now - due).total_seconds())
            return f"round {index} was due at {due:%Y-%m-%d %H:%M:%S} UTC and is not finished ({late} s late)"
    return None


def _stale_positions(session: Session, cohort_id: str, config: CohortConfig, now: datetime) -> str | None:
    """Open positions in markets closed before the cohort's stale limit with no resolution."""
    limit = now - timedelta(days=config.marks.stale_after_days)
    count, oldest, market = session.exec(
        select(func.count(), func.min(MarketRow.close_time), func.min(MarketRow.id))
        .select_from(PositionRow)
        .join(AgentRow, col(AgentRow.id) == col(PositionRow.agent_id))
        .join(MarketRow, col(MarketRow.id) == col(PositionRow.market_id))
        .outerjoin(ResolutionRow, col(ResolutionRow.market_id) == col(PositionRow.market_id))
        .where(
            AgentRow.cohort_id == cohort_id,
            PositionRow.status == "open",
            col(MarketRow.close_time) < limit,
            col(ResolutionRow.id).is_(None),
        )
    ).one()
    if not count:
        return None
    return (
        f"{count} open position(s) wait for a resolution of markets closed over "
        f"{config.marks.stale_after_days} days ago (e.g. {market}, closed {oldest:%Y-%m-%d}): "
        "see `arena markets pending`, `arena markets resolve`"
    )
