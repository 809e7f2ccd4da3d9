"""Whether a database holds a current arena schema, checked without creating or migrating anything.

The first thing a reading command (``arena leaderboard``, ``arena report``, the dashboard) asks,
so it stays light: no ORM models and no Alembic (``arena.db.readiness``). Its one-line answers
pass the reports' secret filter (a server's error can name a URL with a password).
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.db.readiness import read_problem
from arena.reports.redact import Redactor


@dataclass(frozen=True)
class DatabaseState:
    """Whether a database can be read, and if not, what the user should do (one sentence)."""

    ready: bool
    problem: str = ""


def database_state(url: str) -> DatabaseState:
    """Check, without creating or migrating anything, that ``url`` holds a current arena schema."""
    problem = read_problem(url, clean=Redactor().text)
    return DatabaseState(True) if problem is None else DatabaseState(False, problem)
