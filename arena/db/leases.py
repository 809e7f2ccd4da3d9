"""Named leases in the database: at most one process at a time does a named piece of work.

``scheduler`` (the default name) makes a second ``arena serve`` wait instead of double-running:
APScheduler 3 job stores must not be shared by two schedulers, so the process holding the lease is
the only one with a running scheduler. ``replay:<cohort id>`` keeps two ``arena replay`` runs off
one cohort. A lease expires unless renewed, so a crashed holder is replaced after ``ttl`` without
any operator action.

Expiry alone cannot stop a holder that was paused (SIGSTOP, GC, a partition) past its lease from
finishing what it started once it wakes. ``LeaseFence`` closes that gap: an engine it guards
checks, inside every write transaction just before the commit, that the lease is still ours.
``FOR SHARE`` on PostgreSQL keeps a taker's ``UPDATE`` of the lease row waiting until that
commit ends; SQLite's write transactions already hold the database's single write lock.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Engine, or_, update
from sqlmodel import Session, col, select

from arena.db.engine import fenced, session_scope
from arena.db.models import SchedulerLeaseRow
from arena.db.upsert import insert_ignore

LEASE_NAME = "scheduler"
EXPIRED = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    owner: str
    expires_at: datetime


class FenceLost(RuntimeError):
    """A fenced write found the lease held by someone else: the transaction was rolled back."""

    def __init__(self, name: str, owner: str, holder: str | None) -> None:
        self.name, self.owner, self.holder = name, owner, holder
        super().__init__(f"lease {name!r} is no longer held by {owner} (now held by {holder or 'nobody'})")


@dataclass(frozen=True, slots=True)
class LeaseFence:
    """Writes through ``guard(engine)`` commit only while ``owner`` still holds lease ``name``."""

    owner: str
    name: str = LEASE_NAME

    def guard(self, engine: Engine) -> Engine:
        return fenced(engine, self.check)

    def check(self, session: Session) -> None:
        """Raise ``FenceLost`` unless the lease row still names our owner (locked until commit)."""
        mine = session.exec(
            select(SchedulerLeaseRow.owner)
            .where(col(SchedulerLeaseRow.name) == self.name, col(SchedulerLeaseRow.owner) == self.owner)
            .with_for_update(read=True)
        ).first()
        if mine is None:
            now_held = session.exec(
                select(SchedulerLeaseRow.owner).where(col(SchedulerLeaseRow.name) == self.name)
            ).first()
            raise FenceLost(self.name, self.owner, now_held)


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


def renew(engine: Engine, owner: str, now: datetime, ttl: timedelta, *, name: str = LEASE_NAME) -> bool:
    """Extend a lease ``owner`` holds; False once the row names anyone else, even if that holder
    has since let it expire: a holder that lost the lease must not resume its old tenure."""
    return take_over(engine, owner, owner, now, ttl, name=name)


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
