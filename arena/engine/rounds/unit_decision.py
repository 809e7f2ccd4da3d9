"""One agent's decision in a round on its own: what a worker runs for a decision unit.

``run_round`` asks all of a round's agents in one process. A planner with workers instead opens
the round (``open_planned_round``: snapshot, hash and prices stored, nothing claimed) and queues
one unit per agent; a worker runs ``decide_one`` for each, with the round's own code: the same
snapshot (its hash checked against the stored round), claim, ask, validate, and the fills in one
commit (``RoundPlan.commit_phase``). ``rt.engine`` may be fenced by the unit's lease, so every
write of the unit also proves the unit is still this worker's.

The database work of a unit (claim, loading its plan, the commit) runs in a thread of the event
loop's pool: a worker runs many units at once, and their round trips to the database overlap
instead of queueing behind one another on the loop.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from arena.db.engine import session_scope
from arena.engine.rounds.run import RoundPlan, peer_probabilities, round_snapshot
from arena.engine.runtime.budgets import has_caps, spend_by_agent
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.store.claims import ClaimResult, claim_round
from arena.engine.store.round_store import open_round
from markets.types import MarketSnapshot

BUSY = "busy"  # another runner holds the decision's claim


@dataclass(frozen=True)
class OpenedRound:
    """A round opened by its planner: its id and the snapshot every agent of it is shown."""

    index: int
    at: datetime
    round_id: int
    full: MarketSnapshot
    universe: MarketSnapshot


def open_planned_round(rt: CohortRuntime, index: int, at: datetime) -> OpenedRound:
    """Open round ``index`` as ``run_round`` does, claiming nothing; found already open (a worker,
    a second planner), its stored snapshot hash must match this one or ``SnapshotChanged``."""
    full, universe = round_snapshot(rt, at)
    with session_scope(rt.engine) as session:
        round_id = open_round(session, rt.cohort_id, index, at, universe, started_at=rt.happened_at(at))
    return OpenedRound(index, at, round_id, full, universe)


async def decide_one(rt: CohortRuntime, opened: OpenedRound, agent_id: int, token: str) -> str:
    """The agent's decision in the ``opened`` round, claimed with ``token``: its final status, or
    ``BUSY`` while another runner holds the claim (or took it over before our commit).

    An ensemble agent (``uses_peers``) reads the round's finished first-phase decisions, as in
    ``run_round``: the planner queues it only once those are all final."""
    claims = await asyncio.to_thread(_claim, rt, opened, agent_id, token)
    if agent_id in claims.finished:
        return claims.finished[agent_id]
    if agent_id not in claims.claimed:
        return BUSY
    plan, peers, spent = await asyncio.to_thread(_plan, rt, opened, agent_id)
    slot = rt.slot(agent_id)
    deadline = asyncio.get_running_loop().time() + rt.config.round_budget.total_seconds()
    answers = await plan.ask([slot], deadline, peers, claims.claimed, spent)
    stored = await asyncio.to_thread(plan.commit_phase, [slot], claims.claimed, answers)
    return stored.get(agent_id, BUSY)


def _claim(rt: CohortRuntime, opened: OpenedRound, agent_id: int, token: str) -> ClaimResult:
    with session_scope(rt.engine) as session:
        return claim_round(
            session,
            round_id=opened.round_id,
            cohort_id=rt.cohort_id,
            agent_ids=[agent_id],
            token=token,
            now=rt.lease_clock.now(),
            lease=rt.claim_lease,
        )


def _plan(
    rt: CohortRuntime, opened: OpenedRound, agent_id: int
) -> tuple[RoundPlan, dict[str, dict[str, dict[str, float]]] | None, dict[int, Decimal]]:
    """The agent's ledger as stored (other workers may have moved it since this runtime was
    loaded), the round's plan for it alone, its peers' probabilities if it reads them, and the
    spend its phase would have read before any of the phase's agents answered."""
    rt.refresh([agent_id])
    slot = rt.slot(agent_id)
    plan = RoundPlan(
        rt, opened.index, opened.at, opened.round_id, opened.full, opened.universe, serving=[slot]
    )
    peers = peer_probabilities(rt, opened.round_id) if slot.uses_peers else None
    spent: dict[int, Decimal] = {}
    if has_caps(rt.config):
        phase = [s.id for s in rt.agents if s.uses_peers == slot.uses_peers]
        spent = spend_by_agent(rt.engine, rt.cohort_id, leaving_out=(opened.round_id, phase))
    return plan, peers, spent
