"""Claims: who may execute an agent's decision in a round, so a decision never executes twice.

Before any agent is asked anything, the runner inserts one ``decision`` row per (round, agent)
holding its own random ``claim_token`` (the unique constraint on (round_id, agent_id) lets only
one insert win). A claim whose lease has expired, because its owner died, can be taken over by
compare-and-swap on the old token. The final write of a decision succeeds only while the token
is still ours (``finish`` below; a round phase checks all its claims at once with ``held_claims``
and writes them with ``finish_all``), so a slow owner that lost its lease cannot execute anything.

Leases are measured on a wall clock, not the simulated clock of a replay: they are about whether
a *process* is still alive, which simulated time knows nothing about. A token names its owner's
host and pid, so a runner on the same host can see at once that the owner is gone (a crashed
``arena replay`` restarted by hand) instead of waiting out the lease; owners on other hosts
are judged by the lease alone.
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

    This is the first statement of the agent's commit transaction: on PostgreSQL it also locks the
    decision row, so a concurrent takeover waits and then finds the status no longer 'claimed'.
    """
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
    """The decision ids of ``claims`` still ours (our token, still 'claimed'), read at the start
    of a round phase's transaction; on PostgreSQL the rows are locked, so a concurrent takeover
    waits and then finds them no longer 'claimed' (SQLite's writer lock already serialises).
    The read is sent at once and answered with the unit's next read (``read_later``): the
    returned function gives the ids."""
    if not claims:
        return set
    tokens = {c.decision_id: c.token for c in claims}
    query = _HELD[session.get_bind().dialect.name]
    rows = read_later(session, query, {"decision_ids": sorted(tokens)})
    return lambda: {decision_id for decision_id, owner in rows() if tokens[decision_id] == owner}


def _held_query(dialect: str) -> Select[int | None, str]:
    """``held_claims``' read for ``dialect``: locked, in id order, on PostgreSQL."""
    query = select(col(DecisionRow.id), col(DecisionRow.claim_token)).where(
        one_of_param(col(DecisionRow.id), "decision_ids", dialect), col(DecisionRow.status) == CLAIMED
    )
    return query if dialect == "sqlite" else query.order_by(col(DecisionRow.id)).with_for_update()


# Built once per backend (why: ``round_store.ROUND_AT_INDEX``).
_HELD = {dialect: _held_query(dialect) for dialect in ("sqlite", "postgresql")}


def finish_all(
    session: Session, finished: Sequence[tuple[Claim, Mapping[str, Any]]], *, locked: bool = False
) -> None:
    """``finish`` for the claims of a round phase in one statement (``update_by_key``: one UPDATE
    on PostgreSQL, not a statement a row); the token and the status stay in the match as a
    second fence. Every row of values has the same columns (``decision_values``). A claim no
    longer ours raises ``ClaimLost``, unless ``locked``: ``held_claims`` locked these rows in
    this transaction and kept only ours (a round phase; on SQLite the writer lock does it), so
    nobody can have moved them since and every row matches. The count is then not read (a row
    that no longer matched would be left as it was, which the lock rules out), and on PostgreSQL
    the UPDATE goes in the unit's pipeline without a wait of its own. Only inside a write unit
    (``session_scope``): outside a transaction the lock would end with the read."""
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
