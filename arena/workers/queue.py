"""The work queue in PostgreSQL: enqueue units, take one with a lease, renew it, finish it fenced.

A unit is taken with ``SELECT … FOR UPDATE SKIP LOCKED``, the pattern of mature PostgreSQL job
queues: concurrent workers each lock a different row and never wait on each other. Taking a unit
writes a fresh random ``lease_token``; every later write about the unit (renewal, finish, retry)
names that token in its ``WHERE``, so a worker that lost its lease (paused, partitioned, slow) can
no longer change the unit once another worker took it over: its writes match no row and say so.

Lease times are wall-clock (the worker's ``SystemClock``): they are about processes being alive,
which a replay's simulated time knows nothing about.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import URL, CursorResult, Engine, func, make_url, or_, text, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.models import UNFINISHED_UNITS, WorkUnitRow
from arena.db.upsert import insert_ignore

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
UNFINISHED = (QUEUED, RUNNING)
# The kinds of unit (``work_unit.kind``); ``arena.workers.units.RUNNERS`` says how each runs.
REPLAY, MARKS, SETTLE, SYNC = "replay", "marks", "settle", "sync"
DECISION = "decision"  # one agent's decision in one round (``arena.workers.decision_units``)
MAX_ATTEMPTS = 5


class QueueNeedsPostgres(RuntimeError):
    """The queue is shared by processes on many machines: only PostgreSQL coordinates them."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A unit taken by a worker: the token fences every later write about the unit."""

    unit_id: int
    kind: str
    key: str  # what the unit works on: a cohort id, or a venue for a sync
    cohort_id: str | None
    token: str
    attempt: int
    round_index: int | None = None
    agent_id: int | None = None

    def describe(self) -> str:
        """``marks of cohort X``, ``sync of venue polymarket``: the unit for a reader."""
        return f"{self.kind} of {'cohort' if self.cohort_id else 'venue'} {self.key}"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a unit ended, for ``finish``: ``error``, why it failed (None: it did its work);
    ``summary``, what it did; ``warning``, what it could not do while doing the rest (a sync
    whose listing failed halfway: the unit is done, and its ``error`` column says so)."""

    error: str | None
    summary: str = ""
    warning: str | None = None


def require_postgres(url: URL | str) -> None:
    """Refuse any database but PostgreSQL, by its URL (no connection needed)."""
    if make_url(str(url) if isinstance(url, str) else url).get_backend_name() != "postgresql":
        raise QueueNeedsPostgres(
            "workers and queued replays need PostgreSQL (set ARENA_DATABASE_URL or --database-url "
            "to a postgresql+psycopg:// URL); on SQLite, run `arena replay CONFIG.toml` directly"
        )


def fenced_session_url(url: URL | str, ttl: timedelta) -> URL:
    """``url`` with PostgreSQL ending any of our sessions left idle in a transaction for ``ttl``.

    A worker paused (or cut off) inside a transaction would hold its row locks for as long as it
    is stopped, and the worker that takes its unit over would wait on them: fencing is moot if the
    taker can never proceed. The server ends such a session after one lease time, which rolls it
    back and frees its locks; the paused worker finds its connection gone when it wakes."""
    parsed = make_url(str(url)) if isinstance(url, str) else url
    timeout = f"-c idle_in_transaction_session_timeout={int(ttl.total_seconds() * 1000)}"
    given = parsed.query.get("options") or ()
    options = " ".join([*((given,) if isinstance(given, str) else given), timeout])
    return parsed.update_query_dict({"options": options})


def enqueue_replay(engine: Engine, cohort_id: str, now: datetime) -> int:
    """Queue a replay cohort; an unfinished unit for the same cohort is reused, not doubled."""
    return enqueue(engine, REPLAY, cohort_id, now, cohort_id=cohort_id)[0]


def enqueue(
    engine: Engine, kind: str, key: str, now: datetime, *, cohort_id: str | None = None
) -> tuple[int, bool]:
    """Queue a unit of ``kind`` working on ``key``: (its id, True), or (the id of the unfinished
    unit of the same kind and key, False).

    The database decides, not a check before the insert: ``INSERT … ON CONFLICT DO NOTHING`` on
    the partial unique index over unfinished units, so two processes queueing the same work at
    the same moment make one unit (the second insert waits for the first to commit, then
    conflicts). If the unit it conflicted with finishes before we read its id, we insert again."""
    require_postgres(engine.url)
    table = WorkUnitRow.__table__  # type: ignore[attr-defined]
    statement = (
        insert(table)
        .values(_queued(kind, key, now, cohort_id=cohort_id))
        .on_conflict_do_nothing(index_elements=["kind", "dedup_key"], index_where=text(UNFINISHED_UNITS))
        .returning(table.c.id)
    )
    while True:
        with session_scope(engine) as session:
            inserted = session.execute(statement).scalar()
            if inserted is not None:
                return int(inserted), True
            existing = session.exec(
                select(WorkUnitRow.id).where(
                    col(WorkUnitRow.kind) == kind,
                    col(WorkUnitRow.dedup_key) == key,
                    col(WorkUnitRow.state).in_(UNFINISHED),
                )
            ).first()
            if existing is not None:
                return existing, False


def _queued(kind: str, key: str, now: datetime, **about: object) -> dict[str, object]:
    """A new unit's row, queued and due ``now``; ``about``: what it works on."""
    return dict(
        kind=kind, dedup_key=key, state=QUEUED, attempts=0, available_at=now, enqueued_at=now, **about
    )


def enqueue_decisions(
    engine: Engine, cohort_id: str, round_index: int, agent_ids: list[int], now: datetime
) -> None:
    """Queue one unit per agent's decision in round ``round_index``. Units that already exist
    (a standby planning the same round again) are reused, never doubled; one that failed is
    queued again, since its decision is not final if its round is being planned."""
    require_postgres(engine.url)
    rows = [
        _queued(
            DECISION,
            f"{cohort_id}/{round_index}/{agent_id}",  # one unfinished unit per decision, as for any kind
            now,
            cohort_id=cohort_id,
            round_index=round_index,
            agent_id=agent_id,
        )
        for agent_id in agent_ids
    ]
    with session_scope(engine) as session:
        insert_ignore(
            session, WorkUnitRow, rows, on=["kind", "cohort_id", "round_index", "agent_id"], count=False
        )
        session.execute(
            update(WorkUnitRow)
            .where(
                col(WorkUnitRow.kind) == DECISION,
                col(WorkUnitRow.cohort_id) == cohort_id,
                col(WorkUnitRow.round_index) == round_index,
                col(WorkUnitRow.agent_id).in_(agent_ids),
                col(WorkUnitRow.state) == FAILED,
            )
            .values(state=QUEUED, attempts=0, available_at=now, finished_at=None, error=None)
        )


def decision_units(session: Session, cohort_id: str, round_index: int) -> list[WorkUnitRow]:
    """The decision units of one round (the planner watches them)."""
    query = select(WorkUnitRow).where(
        col(WorkUnitRow.kind) == DECISION,
        col(WorkUnitRow.cohort_id) == cohort_id,
        col(WorkUnitRow.round_index) == round_index,
    )
    return list(session.exec(query.order_by(col(WorkUnitRow.agent_id))))


def take(
    engine: Engine,
    owner: str,
    now: datetime,
    ttl: timedelta,
    *,
    max_attempts: int = MAX_ATTEMPTS,
    kinds: tuple[str, ...] | None = None,
) -> Lease | None:
    """Lease the oldest available unit (queued, or running under an expired lease); None if idle.
    Replays come last: a live job's unit is short and due now, and must not wait behind a study's
    backlog of hour-long replays.

    A unit whose lease expired ``max_attempts`` times (it kills or hangs every worker that runs
    it) is failed instead of being handed round the fleet for ever. ``kinds``: only these."""
    taken = take_many(engine, owner, now, ttl, limit=1, max_attempts=max_attempts, kinds=kinds)
    return taken[0] if taken else None


def _available_where(now: datetime, kinds: tuple[str, ...] | None) -> list[Any]:
    """Queued and due, or running under an expired lease; of ``kinds`` if given."""
    where: list[Any] = [
        or_(
            (col(WorkUnitRow.state) == QUEUED) & (col(WorkUnitRow.available_at) <= now),
            (col(WorkUnitRow.state) == RUNNING) & (col(WorkUnitRow.lease_expires_at) < now),
        )
    ]
    if kinds is not None:
        where.append(col(WorkUnitRow.kind).in_(kinds))
    return where


def available(engine: Engine, now: datetime, *, kinds: tuple[str, ...] | None = None) -> int:
    """How many units a worker could take now."""
    with session_scope(engine, write=False) as session:
        return int(session.exec(select(func.count()).where(*_available_where(now, kinds))).one())


def take_many(
    engine: Engine,
    owner: str,
    now: datetime,
    ttl: timedelta,
    *,
    limit: int,
    max_attempts: int = MAX_ATTEMPTS,
    kinds: tuple[str, ...] | None = None,
) -> list[Lease]:
    """Up to ``limit`` available units in one transaction (see ``take``), each with its own token:
    a worker running many small units at once (decisions) takes them in one round trip."""
    with session_scope(engine) as session:
        taken: list[Lease] = []
        while len(taken) < limit:
            query = select(WorkUnitRow).where(*_available_where(now, kinds))
            found = session.exec(
                query.order_by(
                    col(WorkUnitRow.kind) == REPLAY, col(WorkUnitRow.available_at), col(WorkUnitRow.id)
                )
                .limit(limit - len(taken))
                .with_for_update(skip_locked=True)
            ).all()
            if not found:
                break
            for unit in found:
                if unit.attempts >= max_attempts:
                    unit.state, unit.finished_at, unit.lease_token, unit.lease_expires_at = (
                        FAILED,
                        now,
                        None,
                        None,
                    )
                    unit.error = (
                        f"given up after {unit.attempts} attempts whose workers stopped without finishing"
                    )
                    continue
                unit.state, unit.lease_owner, unit.lease_token = RUNNING, owner, secrets.token_hex(16)
                unit.lease_expires_at, unit.attempts = now + ttl, unit.attempts + 1
                unit.started_at = unit.started_at or now
                assert unit.id is not None and unit.lease_token is not None
                taken.append(
                    Lease(
                        unit.id,
                        unit.kind,
                        unit.dedup_key,
                        unit.cohort_id,
                        unit.lease_token,
                        unit.attempts,
                        unit.round_index,
                        unit.agent_id,
                    )
                )
            session.flush()
        return taken


def renew(engine: Engine, lease: Lease, now: datetime, ttl: timedelta) -> bool:
    """Extend our lease; False when the unit is no longer ours (another worker took it over)."""
    return _fenced(engine, lease, lease_expires_at=now + ttl)


def renew_many(engine: Engine, leases: list[Lease], now: datetime, ttl: timedelta) -> set[int]:
    """Extend several leases in one statement; the ids of the units still ours."""
    if not leases:
        return set()
    with session_scope(engine) as session:
        result = session.execute(
            update(WorkUnitRow)
            .where(
                tuple_(col(WorkUnitRow.id), col(WorkUnitRow.lease_token)).in_(
                    [(x.unit_id, x.token) for x in leases]
                )
            )
            .values(lease_expires_at=now + ttl)
            .returning(col(WorkUnitRow.id))
        )
        return {unit_id for (unit_id,) in result.all()}


def finish(
    engine: Engine, lease: Lease, now: datetime, *, error: str | None = None, warning: str | None = None
) -> bool:
    """Mark the unit done (or failed with ``error``; done in part with ``warning``, kept in its
    ``error`` column); False, writing nothing, if we lost it."""
    state = DONE if error is None else FAILED
    note = error if error is not None else warning
    return _fenced(engine, lease, state=state, finished_at=now, error=note, lease_expires_at=None)


def retry_later(engine: Engine, lease: Lease, at: datetime, reason: str) -> bool:
    """Give the unit back to the queue, available again at ``at`` (e.g. its cohort is busy)."""
    return _fenced(
        engine,
        lease,
        state=QUEUED,
        available_at=at,
        lease_owner=None,
        lease_token=None,
        lease_expires_at=None,
        attempts=lease.attempt - 1,
        error=reason,
    )


def _fenced(engine: Engine, lease: Lease, **values: Any) -> bool:
    """One UPDATE that applies only while ``lease.token`` is still the unit's token."""
    with session_scope(engine) as session:
        result = session.execute(
            update(WorkUnitRow)
            .where(col(WorkUnitRow.id) == lease.unit_id, col(WorkUnitRow.lease_token) == lease.token)
            .values(**values)
        )
        return bool(cast(CursorResult[Any], result).rowcount)


def state_of(engine: Engine, unit_ids: list[int]) -> dict[int, WorkUnitRow]:
    """The units ``unit_ids`` as they stand now (``arena serve`` waiting for the units it queued)."""
    with session_scope(engine, write=False) as session:
        rows = session.exec(select(WorkUnitRow).where(col(WorkUnitRow.id).in_(unit_ids)))
        return {row.id: row for row in rows if row.id is not None}


def units(session: Session, *, limit: int = 50) -> list[WorkUnitRow]:
    """The newest units first, for ``arena status``; decision units are summed up per round
    instead (``decision_rounds``): a round of a thousand agents is a thousand units."""
    query = select(WorkUnitRow).where(col(WorkUnitRow.kind) != DECISION)
    return list(session.exec(query.order_by(col(WorkUnitRow.id).desc()).limit(limit)))


@dataclass(frozen=True, slots=True)
class RoundUnits:
    """The decision units of one round, counted by state, for ``arena status``."""

    cohort_id: str
    round_index: int
    by_state: dict[str, int]
    retried: int  # units taken more than once (a worker died or lost its lease)
    oldest_queued: datetime | None
    errors: list[str]


def decision_rounds(session: Session, *, limit: int = 10) -> list[RoundUnits]:
    """The ``limit`` rounds with the newest decision units, newest first."""
    latest = (
        select(WorkUnitRow.cohort_id, WorkUnitRow.round_index)
        .where(col(WorkUnitRow.kind) == DECISION)
        .group_by(col(WorkUnitRow.cohort_id), col(WorkUnitRow.round_index))
        .order_by(func.max(WorkUnitRow.id).desc())
        .limit(limit)
    )
    out = []
    for cohort_id, round_index in session.exec(latest).all():
        assert cohort_id is not None and round_index is not None  # a decision unit has both
        rows = decision_units(session, cohort_id, round_index)
        by_state: dict[str, int] = {}
        for row in rows:
            by_state[row.state] = by_state.get(row.state, 0) + 1
        queued = [r.available_at for r in rows if r.state == QUEUED]
        out.append(
            RoundUnits(
                cohort_id,
                round_index,
                by_state,
                retried=sum(r.attempts > 1 for r in rows),
                oldest_queued=min(queued, default=None),
                errors=[f"agent {r.agent_id}: {r.error}" for r in rows if r.state == FAILED and r.error],
            )
        )
    return out
