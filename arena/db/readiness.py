"""Whether a database can be read by a reading command, checked without creating or migrating it.

Reading commands (``arena status``, ``arena leaderboard``, ``arena cohort list``/``show``, the
dashboard...) ask this first: a SQLite file that does not exist is not created, an empty database
is not given a schema, an older one is not upgraded (``arena db upgrade`` is the one way). Light:
no ORM models, no Alembic.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlalchemy.exc import DBAPIError

from arena.db.engine import make_engine, normalize_url, redact_url
from arena.db.revision import SCHEMA_HEAD, schema_mismatch, stored_revision


def read_problem(url: str, clean: Callable[[str], str] = str) -> str | None:
    """Why ``url`` cannot be read, in one sentence saying what to do; None when it can.
    ``clean``: a filter for the server's own words (they may quote a password)."""
    try:
        parsed = normalize_url(url)
    except ValueError as exc:
        return str(exc)
    where = redact_url(parsed)
    if parsed.get_backend_name() == "sqlite" and not Path(str(parsed.database)).exists():
        return f"No arena database at {where} yet: run `arena demo` to create one."
    engine = make_engine(parsed)
    try:
        with engine.connect() as connection:
            revision = stored_revision(connection)
    except DBAPIError as exc:  # server down, bad credentials...: said plainly, never a traceback
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
        return f"Cannot open {where}: {clean(reason)}"
    finally:
        engine.dispose()
    if revision is None:
        return f"{where} holds no arena data yet: run `arena demo` to fill it."
    if revision != SCHEMA_HEAD:
        return schema_mismatch(where, revision)
    return None
