"""Paid provider requests, recorded as each one answers: a decision attempt that never commits
(its worker killed, its claim taken over, the decision given up on at its timeout) is still
paid for, and the spending caps count it.

An LLM bettor reports every provider request the moment its answer (or error) is in, before the
decision is returned (``AgentView.on_request``). ``ChargeRecorder`` writes it at once, in a
transaction of its own, as an ``llm_charge`` row under the decision's claim token. The
decision's commit stores its requests in ``llm_request`` as before and deletes the charges they
account for (``settle_charges``), in the same transaction; so the charges left are exactly the
paid requests no stored decision accounts for. ``charges_by_agent`` sums them per agent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_UP, Decimal

from sqlalchemy import ColumnElement, Engine, Table, bindparam, delete, func
from sqlmodel import Session, col, select

from agents.types import RequestUsage
from arena.db.engine import session_scope
from arena.db.models import DecisionRow, LLMChargeRow, metadata
from arena.db.types import storable_text
from arena.db.upsert import insert_ignore
from arena.engine.store.claims import Claim

log = logging.getLogger("arena.engine.store.charges")

_COST_QUANTUM = Decimal("1e-10")  # the cost_usd column's precision


@dataclass(frozen=True)
class ChargeRecorder:
    """Writes each provider request of one decision attempt (``claim``) as it answers."""

    engine: Engine
    claim: Claim
    now: Callable[[], datetime]

    async def __call__(self, seq: int, request: RequestUsage) -> None:
        """Record request ``seq`` (1-based, in the order made). A failed write is logged, not
        raised: the answer still counts, and the decision's commit stores the request anyway."""
        try:
            await asyncio.to_thread(self._write, seq, request)
        except Exception as exc:  # the database is down or the unit's lease was lost
            log.warning(
                "decision %s: provider request %s not recorded ahead of the decision: %s",
                self.claim.decision_id,
                seq,
                exc,
            )

    def _write(self, seq: int, request: RequestUsage) -> None:
        row = {
            "decision_id": self.claim.decision_id,
            "claim_token": self.claim.token,
            "seq": seq,
            "agent_id": self.claim.agent_id,
            "prompt_tokens": request.prompt_tokens,
            "completion_tokens": request.completion_tokens,
            "cost_usd": request.cost_usd.quantize(_COST_QUANTUM, rounding=ROUND_UP),
            "latency_s": request.latency_s,
            "outcome": storable_text(request.outcome),
            "charged_at": self.now(),
        }
        with session_scope(self.engine) as session:
            insert_ignore(session, LLMChargeRow, [row], on=["decision_id", "claim_token", "seq"], count=False)


_CHARGE: Table = metadata.tables[LLMChargeRow.__tablename__]
_SETTLE = delete(_CHARGE).where(
    _CHARGE.c.decision_id == bindparam("d"),
    _CHARGE.c.claim_token == bindparam("t"),
    _CHARGE.c.seq <= bindparam("n"),
)


def settle_charges(session: Session, stored: Sequence[tuple[Claim, int]]) -> None:
    """Delete the charges the stored decisions account for: per ``(claim, requests)``, the first
    ``requests`` ones recorded under the claim (the decision's ``llm_request`` rows). Charges of
    requests the decision does not hold (made after it was given up on) stay."""
    params = [{"d": claim.decision_id, "t": claim.token, "n": n} for claim, n in stored if n]
    if params:
        session.connection().execute(_SETTLE, params)  # a Core executemany: the ORM has no bulk DELETE


def charges_by_agent(
    session: Session, cohort_id: str, *, leaving_out: tuple[int, Collection[int]] | None = None
) -> dict[int, Decimal]:
    """Per agent of the cohort, the cost of paid requests no stored decision accounts for;
    ``leaving_out`` (a round id and agent ids): not those agents' charges in that round."""
    query = (
        select(LLMChargeRow.agent_id, func.sum(LLMChargeRow.cost_usd))
        .join(DecisionRow, col(DecisionRow.id) == col(LLMChargeRow.decision_id))
        .where(DecisionRow.cohort_id == cohort_id)
    )
    if leaving_out is not None:
        query = query.where(outside(*leaving_out))
    rows = session.exec(query.group_by(col(LLMChargeRow.agent_id))).all()
    return {agent_id: Decimal(total or 0) for agent_id, total in rows}


def outside(round_id: int, agent_ids: Collection[int]) -> ColumnElement[bool]:
    """Decisions other than those of ``agent_ids`` in round ``round_id``."""
    return ~((col(DecisionRow.round_id) == round_id) & col(DecisionRow.agent_id).in_(agent_ids))
