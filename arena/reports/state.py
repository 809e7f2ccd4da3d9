"""Whether a database holds a current arena schema, checked without creating or migrating anything.

The first thing a reading command (``arena leaderboard``, ``arena report``, the dashboard) asks,
so it stays light: no ORM models and no Alembic (``arena.db.revision``). Its one-line answers
pass the reports' secret filter (a server's error can name a URL with a password).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.exc import DBAPIError

from arena.db.engine import make_engine, normalize_url, redact_url
from arena.db.revision import SCHEMA_HEAD, stored_revision
from arena.reports.redact import Redactor


@dataclass(frozen=True)
class DatabaseState:
    """Whether a database can be read, and if not, what the user should do (one sentence)."""

    ready: bool
    problem: str = ""


def database_state(url: str) -> DatabaseState:
    """Check, without creating or migrating anything, that ``url`` holds a current arena schema."""
    try:
        parsed = normalize_url(url)
    except ValueError as exc:
        return DatabaseState(False, str(exc))
    where = redact_url(parsed)
    if parsed.get_backend_name() == "sqlite" and not Path(str(parsed.database)).exists():
        return DatabaseState(False, f"No arena database at {where} yet: run `arena demo` to create one.")
    engine = make_engine(parsed)
    try:
        with engine.connect() as connection:
            revision = stored_revision(connection)
    except DBAPIError as exc:  # server down, bad credentials...: said plainly, never a traceback
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
        return DatabaseState(False, f"Cannot open {where}: {Redactor().text(reason)}")
    finally:
        engine.dispose()
    if revision is None:
        return DatabaseState(False, f"{where} holds no arena data yet: run `arena demo` to fill it.")
    if revision != SCHEMA_HEAD:
        return DatabaseState(
            False,
            f"{where} is at schema revision {revision}; this arena expects {SCHEMA_HEAD}. "
            "Run any writing arena command (e.g. `arena demo`) to upgrade it.",
        )
    return DatabaseState(True)
