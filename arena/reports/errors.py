"""A cohort's agent errors for the CLI (``arena cohort errors``): every decision that failed or
was refused, with its round, agent, message and the markets its legs named.

An *error* here is what every count of errors means (``arena cohort show``, the replay's progress
and summary): a decision whose status is ``error`` (the agent gave no usable answer: a provider
failure, an invalid answer after its retries, a budget hold) or ``rejected`` (the answer broke a
rule the ledger checks, so none of its legs was executed). Missed rounds (live, found too late)
are not errors: the agent was never asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.db.models import AgentRow, DecisionRow, RoundRow

ERROR_STATUSES = ("error", "rejected")


@dataclass(frozen=True)
class AgentError:
    round_index: int
    at: datetime
    agent: str
    status: str  # error | rejected
    kind: str | None
    message: str
    markets: tuple[str, ...]  # the markets the decision's legs named (none for an unusable answer)

    def as_json(self) -> dict[str, Any]:
        return {
            "round": self.round_index,
            "at": self.at.isoformat(),
            "agent": self.agent,
            "status": self.status,
            "error_kind": self.kind,
            "message": self.message,
            "markets": list(self.markets),
        }


def agent_errors(engine: Engine, cohort_id: str, agent: str | None = None) -> list[AgentError]:
    """The cohort's errors (of one agent if given), by round, then agent name."""
    query = (
        select(RoundRow.round_index, RoundRow.scheduled_at, AgentRow.name, DecisionRow)
        .join(RoundRow, col(RoundRow.id) == col(DecisionRow.round_id))
        .join(AgentRow, col(AgentRow.id) == col(DecisionRow.agent_id))
        .where(DecisionRow.cohort_id == cohort_id, col(DecisionRow.status).in_(ERROR_STATUSES))
        .order_by(col(RoundRow.round_index), col(AgentRow.name))
    )
    if agent is not None:
        query = query.where(AgentRow.name == agent)
    with Session(engine) as session:
        rows = session.exec(query).all()
    return [
        AgentError(
            index,
            at,
            name,
            d.status,
            d.error_kind,
            d.error or "(no message recorded)",
            tuple(dict.fromkeys(str(a["market_id"]) for a in d.actions_json if "market_id" in a)),
        )
        for index, at, name, d in rows
    ]
