"""Claims: who may execute an agent's decision in a round, so a decision never executes twice.

Before any agent is asked, ``claim_round`` inserts one ``decision`` row per (round, agent) under
the runner's token; only one insert wins. The decision's final write (``finish``, or
``held_claims`` then ``finish_all`` for a round phase) succeeds only while the token is still on
it. A claim whose lease expired may be taken over. Leases run on the wall clock, never a replay's
simulated one. Why, and what a token names: docs/design/claims-and-fences.md.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, bindparam, select, update
from sqlmodel import Session, col

from arena.db.keyed_update import update_by_key
from arena.db.models import DecisionRow
from arena.db.one_of import one_of_param
from arena.db.pipeline import read_after_sent, read_later
from arena.db.upsert import column_processors, insert_ignore

CLAIMED = "claimed"
DONE = "done"  # the decision was valid and executed (holding is a valid decision)
REJECTED = "rejected"  # the actions broke the rules; nothing executed, the agent holds
ERROR = "error"  # the agent failed (exception, timeout, unparseable output); the agent holds
MISSED = "missed"  # never asked: the live round was found too late (``arena.engine.rounds.missed``)
FINAL_STATUSES = frozenset({DONE, REJECTED, ERROR, MISSED})


class ClaimLost(RuntimeError):
    """Our claim token is no longer on the decision: another runner took it over."""


def new_token() -> str:
    """``host:pid:random``: unique, and tells a runner on the same host whether the owner lives."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(8)}"


def owner_is_dead(token: str) -> bool:
    """True only when the owner ran on this host and its process no longer exists.

    Anything else (another host, an unparseable token, a live or inaccessible pid) is False, so
    the lease decides; a reused pid can only make us wait, never take over a live claim.
    """
    host, _, rest = token.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@dataclass(frozen=True, slots=True)
class Claim:
    decision_id: int
    agent_id: int
    token: str


@dataclass
class ClaimResult:
    """Per agent of a round: claimed by us, already finished, or held by a live owner."""

    claimed: dict[int, Claim] = field(default_factory=dict)
    finished: dict[int, str] = field(default_factory=dict)  # agent id -> final status
    busy: set[int] = field(default_factory=set)


def claim_round(
    session: Session,
    *,
    round_id: int,
    cohort_id: str,
    agent_ids: Sequence[int],
    token: str,
    now: datetime,
    lease: timedelta,
) -> ClaimResult:
    """Claim every unfinished decision of the round for ``token``; the caller commits."""
    fresh = dict(round_id=round_id, cohort_id=cohort_id, claim_token=token, status=CLAIMED, claimed_at=now)
    insert_ignore(
        session,
        DecisionRow,
        [{**fresh, "agent_id": a} for a in agent_ids],
        on=["round_id", "agent_id"],
        count=False,
    )
    # read back in the pipeline of the insert: one wait for both (``read_after_sent``)
    query = _ROUND_CLAIMS[session.get_bind().dialect.name]
    (existing,) = read_after_sent(session, [(query, {"round_id": round_id, "agent_ids": list(agent_ids)})])
    result = ClaimResult()
    for decision_id, agent_id, owner, status, claimed_at in existing:
        assert decision_id is not None
        if status in FINAL_STATUSES:
            result.finished[agent_id] = status
        elif owner == token or (
            (claimed_at + lease <= now or owner_is_dead(owner))
            and _take_over(session, decision_id, owner, token, now)
        ):
            result.claimed[agent_id] = Claim(decision_id, agent_id, token)
        else:
            result.busy.add(agent_id)
    return result


# Built once per backend (why: ``round_store.ROUND_AT_INDEX``); sqlalchemy's select: sqlmodel's
# is typed for at most four columns.
_ROUND_CLAIMS = {
    dialect: select(
        col(DecisionRow.id),
        col(DecisionRow.agent_id),
        col(DecisionRow.claim_token),
        col(DecisionRow.status),
        col(DecisionRow.claimed_at),
    ).where(
        col(DecisionRow.round_id) == bindparam("round_id"),
        one_of_param(col(DecisionRow.agent_id), "agent_ids", dialect),
    )
    for dialect in ("sqlite", "postgresql")
}


def _take_over(session: Session, decision_id: int, old: str, token: str, now: datetime) -> bool:
    """Compare-and-swap the token of an expired claim; False if someone else moved first."""
    stmt = (
        update(DecisionRow)
        .where(
            col(DecisionRow.id) == decision_id,
            col(DecisionRow.claim_token) == old,
            col(DecisionRow.status) == CLAIMED,
        )
        .values(claim_token=token, claimed_at=now)
    )
    return session.execute(stmt).rowcount == 1  # type: ignore[attr-defined,no-any-return]


def finish(session: Session, claim: Claim, values: Mapping[str, Any]) -> None:
    """Write the decision's outcome if the claim is still ours; raises ``ClaimLost`` otherwise.

    Call it first in the agent's commit transaction.
    """
    # On PostgreSQL the UPDATE locks the row: a concurrent takeover waits, then finds it finished.
    stmt = (
        update(DecisionRow)
        .where(
            col(DecisionRow.id) == claim.decision_id,
            col(DecisionRow.claim_token) == claim.token,
            col(DecisionRow.status) == CLAIMED,
        )
        .values(**values)
    )
    if session.execute(stmt).rowcount != 1:  # type: ignore[attr-defined]
        raise ClaimLost(f"decision {claim.decision_id}: the claim was taken over by another runner")


def held_claims(session: Session, claims: Sequence[Claim]) -> Callable[[], set[int]]:
    """A function giving the decision ids of ``claims`` still ours (our token, still 'claimed').

    Call it at the start of a round phase's write unit: the rows stay locked until it ends, so a
    concurrent takeover waits and then finds them no longer 'claimed'.
    """
    if not claims:
        return set
    tokens = {c.decision_id: c.token for c in claims}
    query = _HELD[session.get_bind().dialect.name]
    # sent now, answered with the unit's next read (``read_later``): the lock costs no wait of its own
    rows = read_later(session, query, {"decision_ids": sorted(tokens)})
    return lambda: {decision_id for decision_id, owner in rows() if tokens[decision_id] == owner}


def _held_query(dialect: str) -> Select[int | None, str]:
    """``held_claims``' read for ``dialect``: locked, in id order, on PostgreSQL."""
    query = select(col(DecisionRow.id), col(DecisionRow.claim_token)).where(
        one_of_param(col(DecisionRow.id), "decision_ids", dialect), col(DecisionRow.status) == CLAIMED
    )
    # SQLite's writer lock (BEGIN IMMEDIATE) already serialises the unit
    return query if dialect == "sqlite" else query.order_by(col(DecisionRow.id)).with_for_update()


# Built once per backend (why: ``round_store.ROUND_AT_INDEX``).
_HELD = {dialect: _held_query(dialect) for dialect in ("sqlite", "postgresql")}


def finish_all(
    session: Session, finished: Sequence[tuple[Claim, Mapping[str, Any]]], *, locked: bool = False
) -> None:
    """``finish`` for every claim of a round phase, in one statement; the caller commits.

    Every row of values has the same columns (``decision_values``). A claim no longer ours raises
    ``ClaimLost``, unless ``locked``: the caller ran ``held_claims`` in this transaction and passes
    only the claims it kept. Call it inside a write unit (``session_scope``).
    """
    # One UPDATE on PostgreSQL (``update_by_key``); the token and status stay in the match as a
    # second fence. When ``locked`` nobody can have moved these rows, so the count is not read and
    # the UPDATE joins the unit's pipeline without a wait (docs/design/claims-and-fences.md).
    if not finished:
        return
    table = DecisionRow.__table__  # type: ignore[attr-defined]
    columns = tuple(finished[0][1])
    keys = ("id", "claim_token", "status")
    processors = column_processors(table, (*columns, *keys), session.get_bind().dialect)
    given = [
        (*(values[c] for c in columns), claim.decision_id, claim.token, CLAIMED) for claim, values in finished
    ]
    rows = [tuple(f(v) for f, v in zip(processors, row, strict=True)) for row in given]
    updated = update_by_key(session, table, columns, keys, rows, count=not locked)
    if not locked and session.get_bind().dialect.supports_sane_multi_rowcount and updated != len(rows):
        raise ClaimLost(f"{len(rows) - updated} of {len(rows)} decisions were taken over")
