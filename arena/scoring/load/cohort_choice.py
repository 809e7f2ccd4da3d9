"""Which cohorts a leaderboard scores when the reader names none, and how it says so.

- No cohort named: the **latest** cohort alone (the newest by creation time, then id), never a
  silent pool of everything the database holds.
- ``pool_all``: every cohort that ran or is running (``POOLED_STATUSES``); a cohort that never
  started (``pending``), was cancelled, or has any other status is left out and listed as such,
  so a reader sees what the pool is made of. Naming such a cohort includes it.
- Cohorts named: exactly those, whatever their status (the reader asked for them).
- A cohort that cannot be scored (a config out of this version's range) is never chosen unnamed;
  it is listed in ``unscored`` with the reason.

Every view that scores cohorts prints ``cohort_line``: the cohorts in one line, and those left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Engine, select
from sqlalchemy.engine import Connection

from arena.db.read_tables import cohort
from arena.scoring.load.database import connected, unscorable
from arena.scoring.load.rows import LoadError

POOLED_STATUSES = ("running", "paused", "completed")
"""Statuses ``--all`` pools: cohorts that have run rounds (or are running them)."""

Selection = Literal["latest", "all", "named"]


@dataclass(frozen=True)
class CohortChoice:
    """The cohorts a leaderboard scores, how they were chosen, and those ``--all`` left out."""

    ids: tuple[str, ...]
    selection: Selection
    left_out: tuple[tuple[str, str], ...] = ()  # (cohort id, status)
    unscored: tuple[tuple[str, str], ...] = ()  # (cohort id, why it cannot be scored)

    def json(self) -> dict[str, Any]:
        """The document's ``cohort_selection`` and ``cohorts_left_out`` keys."""
        return {
            "cohort_selection": self.selection,
            "cohorts_left_out": [{"cohort": c, "status": s} for c, s in self.left_out],
            "cohorts_not_scored": [{"cohort": c, "reason": r} for c, r in self.unscored],
        }


def choose_cohorts(
    bind: Engine | Connection, named: Sequence[str] | None = None, *, pool_all: bool = False
) -> CohortChoice:
    """The cohorts to score: ``named`` ones, every pooled one (``pool_all``), else the latest.

    Raises ``LoadError`` when both are given, or a named cohort does not exist; with no cohort in
    the database the choice is empty."""
    if named and pool_all:
        raise LoadError("--all pools every cohort and --cohort names some: give one or the other")
    query = select(cohort.c.id, cohort.c.status).order_by(cohort.c.created_at.desc(), cohort.c.id.desc())
    with connected(bind) as connection:
        rows = [(r.id, r.status) for r in connection.execute(query)]
    if named:
        known = {c for c, _ in rows}
        missing = [c for c in named if c not in known]
        if missing:
            raise LoadError(f"no cohort with id {missing[0]!r} (see `arena cohort list`)")
        return CohortChoice(tuple(dict.fromkeys(named)), "named")
    # Unnamed cohorts an older version stored out of this version's range are left out, named.
    with connected(bind) as connection:
        poisoned = unscorable(connection)
    scorable = [(c, s) for c, s in rows if c not in poisoned]
    if pool_all:
        pooled = tuple(sorted(c for c, s in scorable if s in POOLED_STATUSES))
        left_out = tuple(sorted((c, s) for c, s in scorable if s not in POOLED_STATUSES))
        return CohortChoice(pooled, "all", left_out, tuple(sorted(poisoned.items())))
    latest = tuple(c for c, _ in scorable[:1])
    newer = [c for c, _ in rows[: [c for c, _ in rows].index(latest[0])]] if latest else list(poisoned)
    return CohortChoice(latest, "latest", unscored=tuple((c, poisoned[c]) for c in sorted(newer)))


def cohort_line(document: dict[str, Any]) -> str:
    """One line naming the cohorts a leaderboard document scores and those it left out."""
    cohorts = list(document.get("cohorts", []))
    selection = document.get("cohort_selection", "named")
    left = [f"{c['cohort']} ({c['status']})" for c in document.get("cohorts_left_out", [])]
    if len(cohorts) == 1 and selection != "all":
        line = f"Cohort: {cohorts[0]}" + (" (the latest)" if selection == "latest" else "")
    else:
        line = f"{len(cohorts)} cohorts pooled: {', '.join(cohorts) or 'none'}"
    if left:
        line += f"; left out (never ran or stopped): {', '.join(left)}"
    return line + "."
