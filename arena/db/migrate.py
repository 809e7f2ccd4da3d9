"""Schema versioning: every database is created and upgraded by Alembic, never by ``create_all``.

So a database always knows its revision, and an older file is brought forward by the same
migrations on SQLite and PostgreSQL. Works from an installed package (the migrations ship inside
``arena/migrations``) as well as from a clone (``alembic.ini`` at the repository root).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Engine
from sqlalchemy.engine import URL, Connection

from arena.db.engine import make_engine, redact_url, writer
from arena.db.revision import SCHEMA_HEAD, schema_mismatch, stored_revision

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
# Any constant works as long as every migrating process uses it (env.py imports it from here);
# PostgreSQL advisory locks are per key and re-entrant within a session. 0x4152454E41 is "ARENA".
MIGRATION_LOCK_KEY = 0x4152454E41
# Alembic keeps its running context in a module global: one migration at a time per process.
_ALEMBIC_LOCK = threading.Lock()


class SchemaVersionError(RuntimeError):
    """The database is at a revision this version of the arena does not know."""


def alembic_config(connection: Connection | None = None) -> Config:
    """An in-memory Alembic config pointing at the packaged migrations (no ini file needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision this code knows."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise SchemaVersionError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


def current_revision(target: str | URL | Engine) -> str | None:
    """The database's revision, or None for a database never migrated (e.g. empty)."""
    with _connection(target, write=False) as connection:
        return stored_revision(connection)


def upgrade(target: str | URL | Engine, revision: str = "head") -> None:
    """Migrate forward to ``revision`` in one transaction, under a lock against concurrent runs."""
    with _connection(target) as connection:
        _run(command.upgrade, connection, revision, target)


def downgrade(target: str | URL | Engine, revision: str) -> None:
    """Migrate back to ``revision`` (``"base"`` drops every arena table)."""
    with _connection(target) as connection:
        _run(command.downgrade, connection, revision, target)


def ensure_schema(target: str | URL | Engine) -> None:
    """Bring the database to head if it is behind; a no-op (one query) when it is current.
    Only for ``arena db upgrade`` and tests: every other process uses ``create_if_empty``."""
    if current_revision(target) != head_revision():
        upgrade(target)


def create_if_empty(target: str | URL | Engine) -> None:
    """Create the schema in an empty database (a no-op, one query, when it is current). A
    database at another revision is refused with ``SchemaVersionError`` (one line): only
    ``arena db upgrade`` moves a database forward, never a process that happens to open it."""
    current = current_revision(target)
    if current is None:
        upgrade(target)
    elif current != SCHEMA_HEAD:
        where = redact_url(target.url if isinstance(target, Engine) else target)
        raise SchemaVersionError(schema_mismatch(where, current))


def _run(
    action: Callable[[Config, str], object], connection: Connection, revision: str, target: str | URL | Engine
) -> None:
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
    try:
        with _ALEMBIC_LOCK:
            action(alembic_config(connection), revision)
    except CommandError as exc:
        where = redact_url(target.url if isinstance(target, Engine) else target)
        raise SchemaVersionError(
            f"cannot migrate {where} to {revision!r}: {exc} (was it written by a newer arena version?)"
        ) from exc


@contextmanager
def _connection(target: str | URL | Engine, *, write: bool = True) -> Iterator[Connection]:
    """A connection in a transaction that commits on success; disposes an engine made here."""
    engine = target if isinstance(target, Engine) else make_engine(target)
    try:
        with (writer(engine) if write else engine).begin() as connection:
            yield connection
    finally:
        if engine is not target:
            engine.dispose()
