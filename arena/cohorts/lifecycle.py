"""A cohort's life after launch: pause, resume and cancel, each a compare-and-set on its status.

The compare-and-set means two operators (or an operator and the scheduler) racing on one cohort
can never both win: the second sees the status the first wrote and is refused with a message.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Engine, update
from sqlmodel import col

from arena.db.engine import session_scope
from arena.db.models import CohortRow

TRANSITIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "pause": (("pending", "running"), "paused"),
    "resume": (("paused",), "running"),
    "cancel": (("pending", "running", "paused"), "cancelled"),
}


class CohortStateError(RuntimeError):
    """A status change the cohort's current status does not allow."""


def change_status(engine: Engine, cohort_id: str, action: str, *, at: datetime) -> str:
    """Apply ``pause``/``resume``/``cancel`` atomically (compare-and-set on the current status)."""
    allowed, target = TRANSITIONS[action]
    with session_scope(engine) as session:
        row = session.get(CohortRow, cohort_id)
        if row is None:
            raise CohortStateError(f"no cohort with id {cohort_id!r} (see `arena cohort list`)")
        if row.status not in allowed:
            raise CohortStateError(
                f"cohort {cohort_id} is {row.status}; {action} needs one of: {', '.join(allowed)}"
            )
        values: dict[str, Any] = {"status": target}
        if target == "cancelled":
            values["finished_at"] = at
        stmt = (
            update(CohortRow)
            .where(col(CohortRow.id) == cohort_id, col(CohortRow.status) == row.status)
            .values(**values)
        )
        session.execute(stmt)
    return target
