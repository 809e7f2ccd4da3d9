"""Live rounds found too late are recorded as *missed*, never asked with a past snapshot.

A live server that was down past a round's time could run the round on the snapshot as of its
scheduled time, but the model would answer today: it may know what happened since (news, the
resolution itself), which is hindsight no replay can detect. So a round found due more than the
cohort's ``schedule.catch_up_grace`` after its time is stored with status ``missed``, and every
agent without a final decision gets a ``missed`` decision carrying the reason. A missed decision
is not an answer: it has no ``decided_at``, so scoring never reads it as an invalid answer of the
agent; ``arena cohort show`` counts it apart from errors.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import update
from sqlmodel import col, select

from arena.db.engine import session_scope
from arena.db.models import DecisionRow, RoundRow
from arena.db.upsert import insert_ignore
from arena.engine.rounds.report import RoundReport, close_round
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.store.claims import CLAIMED, MISSED


def too_late(rt: CohortRuntime, at: datetime, now: datetime) -> timedelta | None:
    """How late a live round scheduled at ``at`` would start at ``now``, if past the grace."""
    late = now - at
    return late if late > rt.config.schedule.catch_up_grace else None


def miss_round(rt: CohortRuntime, index: int, at: datetime, late: timedelta) -> RoundReport:
    """Record round ``index`` (scheduled at ``at``, found ``late``) as missed by every agent that
    has no final decision. Claims still within their lease are left to their owner (they end
    done or lost to fencing); expired ones are missed too."""
    now = rt.lease_clock.now()
    reason = (
        f"round found {_span(late)} after its time, more than schedule.catch_up_grace "
        f"({_span(rt.config.schedule.catch_up_grace)}): not asked, so no answer uses hindsight"
    )
    missed = {"status": MISSED, "error": reason, "error_kind": MISSED}  # also the claim token below
    with session_scope(rt.engine) as session:
        new_round = dict(cohort_id=rt.cohort_id, round_index=index, scheduled_at=at, status="running")
        insert_ignore(session, RoundRow, [{**new_round, "started_at": now}], on=["cohort_id", "round_index"])
        round_id = session.exec(
            select(RoundRow.id).where(RoundRow.cohort_id == rt.cohort_id, RoundRow.round_index == index)
        ).one()
        assert round_id is not None
        fresh = dict(round_id=round_id, cohort_id=rt.cohort_id, claim_token=MISSED, claimed_at=now)
        rows = [{**fresh, **missed, "agent_id": s.id} for s in rt.agents]
        insert_ignore(session, DecisionRow, rows, on=["round_id", "agent_id"])
        session.execute(
            update(DecisionRow)
            .where(
                col(DecisionRow.round_id) == round_id,
                col(DecisionRow.status) == CLAIMED,
                col(DecisionRow.claimed_at) <= now - rt.claim_lease,
            )
            .values(**missed)
        )
    return close_round(rt, round_id, index, at)


def _span(delta: timedelta) -> str:
    """A lateness or a grace for a reader: in hours from an hour up, else minutes, else seconds
    (a grace of seconds is as valid as one of days)."""
    seconds = delta.total_seconds()
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"
