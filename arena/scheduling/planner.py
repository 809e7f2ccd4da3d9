"""Planning a round for workers: one decision unit per agent, then the round closed as in-process.

With ``arena worker`` processes present, ``arena serve`` does not ask agents itself. For a due
round it opens the round (snapshot, hash and prices, as ``run_round`` does), queues one
``decision`` unit per agent, waits until every agent's decision is final, then closes the round
with ``round_report.close_round``: the same rows, in the same states, as the in-process path. Ensemble
agents (``uses_peers``) are queued only once the first phase is final, so they read the same
peer probabilities as in-process.

The wait is bounded (default: the cohort's claim lease, ``round_budget`` + ``call_timeout``). A
round not finished in time, or whose units failed, raises ``RoundUnfinished`` naming each agent
and its unit's state and error; the round stays ``running``, and the next planning of it reuses
the units (failed ones are queued again), so nothing is lost and nothing runs twice.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, func
from sqlmodel import Session, col, select

from arena.core.clock import SystemClock
from arena.db.engine import session_scope
from arena.db.models import DecisionRow, WorkUnitRow
from arena.engine.live.jobs import RoundUnfinished
from arena.engine.rounds.empty import nothing_to_trade, record_empty
from arena.engine.rounds.report import RoundReport, close_round, read_report
from arena.engine.rounds.unit_decision import open_planned_round
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.store.claims import FINAL_STATUSES
from arena.workers import queue

POLL = timedelta(seconds=0.1)
# Queue times are compared with the workers' wall clocks (process liveness, as leases), never with
# a cohort's clock: a replay's simulated time, or a test's, would make units due too late.
WALL_CLOCK = SystemClock()


async def plan_round(
    rt: CohortRuntime, index: int, at: datetime, *, bound: timedelta | None = None, poll: timedelta = POLL
) -> RoundReport:
    """Round ``index`` at ``at`` run by workers: plan, wait (at most ``bound``), close."""
    finished = read_report(rt, index, only_final=True)
    if finished is not None:
        return finished
    opened = open_planned_round(rt, index, at)
    reason = nothing_to_trade(rt, opened.full, opened.universe)
    if reason is not None and (empty := record_empty(rt, index, at, opened.universe, reason)) is not None:
        return empty
    round_id = opened.round_id
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (bound or rt.claim_lease).total_seconds()
    first = [s.id for s in rt.agents if not s.uses_peers]
    second = [s.id for s in rt.agents if s.uses_peers]
    for phase in (first, second):
        if phase:
            queue.enqueue_decisions(rt.engine, rt.cohort_id, index, phase, WALL_CLOCK.now())
            await _wait(rt, round_id, index, phase, deadline, poll)
    rt.refresh([s.id for s in rt.agents])  # the workers moved the ledgers: marks and settlements follow
    return close_round(rt, round_id, index, at)


async def _wait(
    rt: CohortRuntime, round_id: int, index: int, agent_ids: list[int], deadline: float, poll: timedelta
) -> None:
    """Until every decision of ``agent_ids`` is final; raises ``RoundUnfinished`` when the bound
    passes or when every unfinished decision's unit has failed (waiting longer cannot help)."""
    loop = asyncio.get_running_loop()
    while True:
        with session_scope(rt.engine, write=False) as session:
            final, failed = _progress(session, rt.cohort_id, round_id, index, agent_ids)
        if final == len(agent_ids):
            return
        if failed >= len(agent_ids) - final or loop.time() >= deadline:
            raise _unfinished(rt, round_id, index, agent_ids, timed_out=loop.time() >= deadline)
        await asyncio.sleep(poll.total_seconds())


def _progress(
    session: Session, cohort_id: str, round_id: int, index: int, agent_ids: list[int]
) -> tuple[int, int]:
    """How many of the agents' decisions are final, and how many of their units failed (two
    counts: the planner polls them often while a thousand agents decide)."""
    final = session.exec(select(func.count()).where(*_final_decisions(round_id, agent_ids))).one()
    failed = session.exec(
        select(func.count()).where(
            WorkUnitRow.kind == queue.DECISION,
            WorkUnitRow.cohort_id == cohort_id,
            WorkUnitRow.round_index == index,
            col(WorkUnitRow.agent_id).in_(agent_ids),
            WorkUnitRow.state == queue.FAILED,
        )
    ).one()
    return int(final), int(failed)


def _final_decisions(round_id: int, agent_ids: list[int]) -> tuple[ColumnElement[bool], ...]:
    """The agents' decisions of the round that are final (done, held, errored: nothing to wait for)."""
    return (
        col(DecisionRow.round_id) == round_id,
        col(DecisionRow.agent_id).in_(agent_ids),
        col(DecisionRow.status).in_(FINAL_STATUSES),
    )


def _unfinished(
    rt: CohortRuntime, round_id: int, index: int, agent_ids: list[int], *, timed_out: bool
) -> RoundUnfinished:
    """The error naming every agent whose decision is not final, with its unit's state and error."""
    with session_scope(rt.engine, write=False) as session:
        final = set(
            session.exec(select(DecisionRow.agent_id).where(*_final_decisions(round_id, agent_ids))).all()
        )
        units = {u.agent_id: u for u in queue.decision_units(session, rt.cohort_id, index)}
    open_ids = [a for a in agent_ids if a not in final]
    names = {s.id: s.name for s in rt.agents}
    detail = "; ".join(
        f"{names[a]}: unit {units[a].id} {units[a].state}"
        + (f" ({units[a].error})" if units[a].error else "")
        if a in units
        else f"{names[a]}: no unit"
        for a in open_ids
    )
    why = "the wait for workers ran out" if timed_out else "their units failed"
    return RoundUnfinished(
        f"cohort {rt.cohort_id} round {index}: {len(open_ids)} of {len(agent_ids)} decisions "
        f"not final ({why}): {detail}"
    )
