"""Storing a round phase: every agent's decision and fills in ONE transaction.

``store_phase`` proves each claim is still ours and each ledger unchanged, then, under those
locks, executes each answer on its in-memory ledger (``stage``) and writes every decision, fill
and position. An agent whose claim was taken over is left out; one whose ledger moved gets its
decision recorded as a ``ledger_conflict`` error, not executed. Any error rolls the whole phase
back. Why one transaction, and why fills are stamped under the locks:
docs/design/round-phase-transaction.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlmodel import Session

from agents.types import Decision
from arena.engine.rounds.asking import Answer
from arena.engine.rounds.decisions import Outcome, decision_values, execute, with_plausible_usage
from arena.engine.runtime.cohort import AgentSlot
from arena.engine.store.charges import settle_charges
from arena.engine.store.claims import ERROR, Claim, finish_all, held_claims
from arena.engine.store.ledger_store import FillBatch, stale_books, write_fill_batches
from arena.tools.store import store_traces
from portfolio import MarketId, Quotes


@dataclass(frozen=True)
class Staged:
    """One agent's decision executed on its ledger, with the row values it will be stored as."""

    slot: AgentSlot
    claim: Claim
    decision: Decision
    outcome: Outcome
    values: dict[str, Any]
    cash: Decimal
    max_bet: Decimal
    decided_at: datetime  # when the answer was in: the real time live, the round's time in replay


@dataclass(frozen=True)
class Pending:
    """One agent's answer, waiting to be executed at ``quotes`` under its claim."""

    slot: AgentSlot
    claim: Claim
    answer: Answer
    quotes: Quotes
    closed_markets: Mapping[MarketId, datetime] | None = None  # closed for trading, with close times


@dataclass(frozen=True)
class Stored:
    """What ``store_phase`` did: every answer executed on its ledger (``staged``), the agents whose
    claim was lost, and those whose ledger had moved."""

    staged: list[Staged]
    lost: list[Staged]
    conflicts: list[Staged]


def stage(pending: Pending, filled_at: datetime) -> Staged:
    """Execute the answer on the agent's ledger at its quotes, the fills stamped ``filled_at``
    (a leg on one of ``pending.closed_markets`` refused naming its close); nothing is written yet."""
    ledger = pending.slot.book.ledger
    cash, max_bet = ledger.cash, ledger.max_bet()
    decision, decided_at = with_plausible_usage(pending.answer.decision), pending.answer.at
    outcome = execute(
        ledger,
        decision,
        pending.quotes,
        filled_at,
        decision_id=str(pending.claim.decision_id),
        closed_markets=pending.closed_markets,
    )
    values = decision_values(decision, outcome, cash_at_start=cash, max_bet=max_bet, at=decided_at)
    return Staged(pending.slot, pending.claim, decision, outcome, values, cash, max_bet, decided_at)


def store_phase(
    session: Session, pending: Sequence[Pending], *, executed_at: Callable[[], datetime]
) -> Stored:
    """Execute and store the answers in ``session`` (the caller commits), the fills stamped
    ``executed_at()`` once the agents' rows are locked; see the module docstring."""
    still_ours = held_claims(session, [p.claim for p in pending])
    # every agent's ledger is fenced, ours or not: on PostgreSQL the claims' answer then comes
    # with the fence's, in one wait (a lost claim's agent is locked until this commits)
    stale = stale_books(session, [p.slot.book for p in pending])
    at = executed_at()
    staged = [stage(p, at) for p in pending]
    held = still_ours()
    ours = [s for s in staged if s.claim.decision_id in held]
    problems = {s.slot.id: stale[s.slot.id] for s in ours if s.slot.id in stale}
    fresh = [s for s in ours if s.slot.id not in problems]
    conflicts = [s for s in ours if s.slot.id in problems]
    finish_all(
        session,
        [(s.claim, s.values) for s in fresh]
        + [(s.claim, _conflict_values(s, problems[s.slot.id])) for s in conflicts],
        locked=True,
    )
    # the research-tool calls and requests behind each stored decision; its charges are then in it
    store_traces(session, ((s.claim.decision_id, s.slot.id, s.decision) for s in fresh + conflicts))
    settle_charges(session, [(s.claim, len(s.decision.usage.requests)) for s in fresh + conflicts])
    write_fill_batches(
        session, [FillBatch(s.slot.book, s.outcome.fills, s.claim.decision_id) for s in fresh], at=at
    )
    lost = [s for s in staged if s.claim.decision_id not in held]
    return Stored(staged=staged, lost=lost, conflicts=conflicts)


def _conflict_values(staged: Staged, message: str) -> dict[str, Any]:
    """Another process moved this agent's ledger mid-round: the decision was made on a stale
    portfolio, so it is recorded as an error and not executed."""
    failed = Outcome(ERROR, (), f"not executed: {message}", "ledger_conflict")
    return decision_values(
        staged.decision, failed, cash_at_start=staged.cash, max_bet=staged.max_bet, at=staged.decided_at
    )
