"""Dollar caps on provider spend (``budget.max_cost_usd``), per agent and per cohort.

Tool loops multiply what a decision costs, so a cohort can cap it. Before each phase of a round
the spend recorded so far (the sum of the agents' ``decision.cost_usd``, every request of every
attempt included, plus the paid requests no stored decision accounts for: attempts whose worker
died or whose claim was taken over, ``store.charges``) is read back; an agent at or over its own
cap, or any agent once the cohort is at or over its cap, is not asked: it holds, with the reason
recorded as an ``over_budget`` error.
Agents that never spend (no cost recorded, e.g. baselines) are never stopped by the cohort cap.
A cap is checked between decisions, so the decision that crosses it is completed and counted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal

from sqlalchemy import Engine, func
from sqlmodel import col, select

from agents.types import Decision
from arena.cohorts.config import CohortConfig
from arena.cohorts.seats import seats
from arena.db.engine import session_scope
from arena.db.models import DecisionRow
from arena.engine.runtime.cohort import AgentSlot
from arena.engine.store.charges import charges_by_agent, outside

OVER_BUDGET = "over_budget"


def spend_by_agent(
    engine: Engine, cohort_id: str, *, leaving_out: tuple[int, Collection[int]] | None = None
) -> dict[int, Decimal]:
    """Recorded provider spend of each agent of the cohort, in dollars: its decisions' and its
    charges no decision accounts for. ``leaving_out`` (a round id and agent ids): not counting
    those agents' decisions and charges in that round, so one agent's unit, run after others of
    its phase committed, reads the spend its whole phase would read together."""
    query = select(DecisionRow.agent_id, func.sum(DecisionRow.cost_usd)).where(
        DecisionRow.cohort_id == cohort_id
    )
    if leaving_out is not None:
        query = query.where(outside(*leaving_out))
    with session_scope(engine, write=False) as session:
        rows = session.exec(query.group_by(col(DecisionRow.agent_id))).all()
        charged = charges_by_agent(session, cohort_id, leaving_out=leaving_out)
    spent = {agent_id: Decimal(total or 0) for agent_id, total in rows}
    for agent_id, cost in charged.items():
        spent[agent_id] = spent.get(agent_id, Decimal(0)) + cost
    return spent


def agent_caps(config: CohortConfig, names: Collection[str] | None = None) -> dict[str, Decimal]:
    """Per-agent caps by agent name, from each agent's ``budget.max_cost_usd`` setting; only of
    ``names`` if given (a worker's unit asks about one agent of a cohort of thousands)."""
    caps = {}
    for seat in seats(config):  # a replicate has its own cap: each is an agent of its own
        if names is not None and seat.name not in names:
            continue
        budget = seat.settings.get("budget")
        cap = budget.get("max_cost_usd") if isinstance(budget, Mapping) else None
        if cap is not None:
            caps[seat.name] = Decimal(str(cap))
    return caps


def has_caps(config: CohortConfig) -> bool:
    """Whether any cap applies (without one, no spend needs reading back)."""
    return config.budget.max_cost_usd is not None or bool(agent_caps(config))


def held_for_budget(
    config: CohortConfig, slots: Sequence[AgentSlot], spent: Mapping[int, Decimal]
) -> dict[str, Decision]:
    """The hold decision of every agent in ``slots`` that is over a cap, by agent name."""
    caps = agent_caps(config, {slot.name for slot in slots})
    cohort_cap = config.budget.max_cost_usd
    cohort_spent = sum(spent.values(), Decimal(0))
    held = {}
    for slot in slots:
        own = spent.get(slot.id, Decimal(0))
        cap = caps.get(slot.name)
        if cap is not None and own >= cap:
            reason = f"over budget: this agent spent ${own:.4f} of its ${cap} cap (budget.max_cost_usd)"
        elif cohort_cap is not None and own > 0 and cohort_spent >= cohort_cap:
            reason = (
                f"over budget: the cohort spent ${cohort_spent:.4f} of its ${cohort_cap} cap "
                "(budget.max_cost_usd)"
            )
        else:
            continue
        held[slot.name] = Decision(error=reason, error_kind=OVER_BUDGET)
    return held
