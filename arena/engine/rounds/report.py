"""A round's report: closing the round once every decision is final, and reading it back.

Apart from ``rounds`` (asking the agents) because the planner of workers' rounds
(``workers.planner``) and the missed-round job close and read rounds without running one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy import bindparam, update
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.models import DecisionRow, RoundRow
from arena.db.pipeline import read_after_sent, send_statement
from arena.db.statuses import FINISHED_ROUND_STATUSES
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.store.claims import ERROR, FINAL_STATUSES, MISSED
from arena.engine.store.round_store import ROUND_AT_INDEX

log = logging.getLogger("arena.engine.rounds.run")

# The statements a round reads with, built once (why: ``round_store.ROUND_AT_INDEX``).
_STATUSES = select(DecisionRow.agent_id, DecisionRow.status, DecisionRow.error).where(
    col(DecisionRow.round_id) == bindparam("round_id")
)
_ROUND_ROW = sa_select(col(RoundRow.status), col(RoundRow.scheduled_at), col(RoundRow.market_count)).where(
    col(RoundRow.id) == bindparam("round_id")
)
_FINISH_ROUND = (
    update(RoundRow)
    .where(col(RoundRow.id) == bindparam("round_id"))
    .values(status=bindparam("new_status"), finished_at=bindparam("finished"))
)


@dataclass(frozen=True)
class RoundReport:
    """How a round ended. ``status``: done | failed (every agent errored) | missed (no agent was
    asked: found too late) | empty (no agent was asked: nothing to trade; ``note`` says why) |
    busy (some decisions are held by another live runner) | running (interrupted before every
    agent finished)."""

    round_index: int
    at: datetime
    status: str
    market_count: int
    statuses: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    note: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == "failed"


def close_round(rt: CohortRuntime, round_id: int, index: int, at: datetime) -> RoundReport:
    """Mark the round done (or failed: every agent errored; or missed: none was asked) once every
    decision is final. The report is read in the same transaction (the statuses and the round's
    row it has just read), not again in one of its own: one unit of work fewer a round. On
    PostgreSQL both reads share one wait, and the round's update goes with the COMMIT
    (``pipeline.read_after_sent``, ``pipeline.send_statement``)."""
    with session_scope(rt.engine) as session:
        decisions, (row,) = read_after_sent(
            session, [(_STATUSES, {"round_id": round_id}), (_ROUND_ROW, {"round_id": round_id})]
        )
        statuses = _by_name(rt, decisions)
        status, scheduled_at, market_count = row
        final = [s for s, _ in statuses.values() if s in FINAL_STATUSES]
        if len(final) == len(rt.agents) and status not in FINISHED_ROUND_STATUSES:
            status = _final_round_status(final)
            finished = {"round_id": round_id, "new_status": status, "finished": rt.happened_at(at)}
            send_statement(session, _FINISH_ROUND, finished)
        report = _report(rt, index, status, scheduled_at, market_count, statuses)
    if report.failed:
        log.error(
            "round %s of cohort %s failed: every agent errored (%s)", index, rt.cohort_id, report.errors
        )
    return report


def _final_round_status(final: list[str]) -> str:
    if all(s == MISSED for s in final):
        return "missed"
    return "failed" if all(s == ERROR for s in final) else "done"


def read_report(rt: CohortRuntime, index: int, *, only_final: bool) -> RoundReport | None:
    with session_scope(rt.engine, write=False) as session:
        row = session.exec(ROUND_AT_INDEX, params={"cohort_id": rt.cohort_id, "index": index}).first()
        if row is None or row.id is None or (only_final and row.status not in FINISHED_ROUND_STATUSES):
            return None
        statuses = _statuses(session, rt, row.id)
    report = _report(rt, index, row.status, row.scheduled_at, row.market_count, statuses)
    return replace(report, note=row.note)


def _report(
    rt: CohortRuntime,
    index: int,
    status: str,
    scheduled_at: datetime,
    market_count: int | None,
    statuses: dict[str, tuple[str, str | None]],
) -> RoundReport:
    """Round ``index`` as stored: its row's status, time and market count, and its decisions'
    statuses (``_statuses``)."""
    busy = any(s not in FINAL_STATUSES for s, _ in statuses.values()) or len(statuses) < len(rt.agents)
    return RoundReport(
        round_index=index,
        at=scheduled_at,
        status=status if status in FINISHED_ROUND_STATUSES else ("busy" if busy else status),
        market_count=market_count or 0,
        statuses={name: s for name, (s, _) in statuses.items()},
        errors={name: e for name, (s, e) in statuses.items() if e},
    )


def _statuses(session: Session, rt: CohortRuntime, round_id: int) -> dict[str, tuple[str, str | None]]:
    return _by_name(rt, session.exec(_STATUSES, params={"round_id": round_id}).all())


def _by_name(
    rt: CohortRuntime, rows: Sequence[tuple[int, str, str | None]]
) -> dict[str, tuple[str, str | None]]:
    """The decisions' (status, error) by agent name, from rows of ``_STATUSES``."""
    names = {s.id: s.name for s in rt.agents}
    return {names[a]: (status, error) for a, status, error in rows if a in names}
