"""Lease fencing: a unit's writes commit only while its worker still holds the unit's lease.

A worker paused, cut off or slow past its lease may wake up after another worker took the unit
over. Renewal (``arena.workers.keeper``) tells it so eventually, but a write already under way
must be stopped at its commit: ``UnitFence`` checks, last in the write's own transaction, that the
lease token is still in the unit's row. One mechanism for every kind of unit: the live jobs' writes
(``UnitContext.fenced``) and each decision unit's writes go through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.db.engine import fenced
from arena.db.models import WorkUnitRow
from arena.workers.queue import Lease


class LeaseLost(RuntimeError):
    """The unit's lease went to another worker while this one ran it."""


class CommitRefused(LeaseLost):
    """A write fenced by a unit's lease found the lease gone: the transaction was rolled back."""


@dataclass(frozen=True, slots=True)
class UnitFence:
    """Writes through ``guard(engine)`` commit only while ``lease`` is still the unit's lease: the
    check runs last in the write's own transaction and locks the unit row (``FOR SHARE``) until
    the commit, so a taker's lease cannot change under it. Every kind's writes that must not
    outlive its lease go through it (the live jobs' ``UnitContext.fenced``, decision units)."""

    lease: Lease

    def guard(self, engine: Engine) -> Engine:
        return fenced(engine, self.check)

    def check(self, session: Session) -> None:
        held = session.exec(
            select(WorkUnitRow.id)
            .where(
                col(WorkUnitRow.id) == self.lease.unit_id, col(WorkUnitRow.lease_token) == self.lease.token
            )
            .with_for_update(read=True)
        ).first()
        if held is None:
            raise CommitRefused(
                f"unit {self.lease.unit_id}: its lease was taken over by another worker; "
                "this worker's commit is refused (fencing)"
            )
