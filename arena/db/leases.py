"""Named leases in the database: at most one process at a time does a named piece of work.

``scheduler`` (the default name) makes a second ``arena serve`` wait instead of double-running:
APScheduler 3 job stores must not be shared by two schedulers, so the process holding the lease is
the only one with a running scheduler. ``replay:<cohort id>`` keeps two ``arena replay`` runs off
one cohort. A lease expires unless renewed, so a crashed holder is replaced after ``ttl`` without
any operator action.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Engine, or_, update
from sqlmodel import select

from arena.db.engine import session_scope
from arena.db.models import SchedulerLeaseRow
from arena.db.upsert import insert_ignore

LEASE_NAME = "scheduler"
EXPIRED = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    owner: str
    expires_at: datetime


def new_owner(label: str) -> str:
    """A unique owner token; ``label`` (host:pid) makes ``arena status`` readable."""
    return f"{label}#{secrets.token_hex(4)}"


def try_acquire(engine: Engine, owner: str, now: datetime, ttl: timedelta, *, name: str = LEASE_NAME) -> bool:
    """Take or renew the lease when it is free, expired or already ours; True if we hold it."""
    with session_scope(engine) as session:
        insert_ignore(
            session,
            SchedulerLeaseRow,
            [{"name": name, "owner": owner, "expires_at": now + ttl}],
            on=("name",),
        )
        result = session.execute(
            update(SchedulerLeaseRow)
            .where(SchedulerLeaseRow.name == name)  # type: ignore[arg-type]
            .where(or_(SchedulerLeaseRow.owner == owner, SchedulerLeaseRow.expires_at < now))  # type: ignore[arg-type]
            .values(owner=owner, expires_at=now + ttl)
        )
        # sqlmodel types Session.execute as a plain Result; an UPDATE's is a CursorResult (rowcount).
        return bool(cast(CursorResult[Any], result).rowcount)


def release(engine: Engine, owner: str, *, name: str = LEASE_NAME) -> None:
    """Give the lease up at a clean shutdown so a standby can take over at once."""
    with session_scope(engine) as session:
        session.execute(
            update(SchedulerLeaseRow)
            .where(SchedulerLeaseRow.name == name, SchedulerLeaseRow.owner == owner)  # type: ignore[arg-type]
            .values(expires_at=EXPIRED)
        )


def holder(engine: Engine, *, name: str = LEASE_NAME) -> LeaseHolder | None:
    with session_scope(engine, write=False) as session:
        row = session.exec(select(SchedulerLeaseRow).where(SchedulerLeaseRow.name == name)).first()
        return None if row is None else LeaseHolder(row.owner, row.expires_at)


def take_over(
    engine: Engine, old_owner: str, owner: str, now: datetime, ttl: timedelta, *, name: str
) -> bool:
    """Compare-and-swap the lease from ``old_owner`` (known dead) to ``owner``; False if it moved."""
    with session_scope(engine) as session:
        result = session.execute(
            update(SchedulerLeaseRow)
            .where(SchedulerLeaseRow.name == name, SchedulerLeaseRow.owner == old_owner)  # type: ignore[arg-type]
            .values(owner=owner, expires_at=now + ttl)
        )
        return bool(cast(CursorResult[Any], result).rowcount)
