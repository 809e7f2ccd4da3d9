"""The schema revision this code expects, and the one a database holds, without loading Alembic.

Why apart from ``arena.db.migrate``: reading commands (``arena leaderboard``, ``arena report``,
the dashboard) only ask whether a database is current, and importing Alembic and parsing every
migration script cost more CPU than the leaderboard's scoring of the demo cohort. So the newest
revision is written here once; ``tests/db/test_migrations.py`` proves it is Alembic's head, and a
new migration that forgets to move it fails there.
"""

from __future__ import annotations

from sqlalchemy import column, inspect, select, table
from sqlalchemy.engine import Connection

SCHEMA_HEAD = "0013"
VERSION_TABLE = "alembic_version"  # Alembic's default, which arena/migrations/env.py keeps
_VERSION = table(VERSION_TABLE, column("version_num"))


def stored_revision(connection: Connection) -> str | None:
    """The revision stamped in the database, or None for a database never migrated (e.g. empty).

    Several stamps (branches, which this project never makes) come back joined with ", ", so a
    caller comparing with ``SCHEMA_HEAD`` sees a mismatch and names them all.
    """
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    stamps = sorted(connection.execute(select(_VERSION.c.version_num)).scalars())
    return ", ".join(stamps) or None


def schema_mismatch(where: str, revision: str) -> str:
    """The one line for a database at ``revision`` (not ``SCHEMA_HEAD``, not empty): an older one
    is upgraded by ``arena db upgrade`` only, never by a process that meets it."""
    if revision < SCHEMA_HEAD:  # revisions are zero-padded numbers: "0009" < "0010"
        return (
            f"{where} is at schema revision {revision}; this arena needs {SCHEMA_HEAD}: "
            "run `arena db upgrade` (stop `arena serve` and the workers first)"
        )
    return (
        f"{where} is at schema revision {revision}, newer than this arena's {SCHEMA_HEAD}: "
        "it was written by a newer arena version; upgrade this one"
    )
