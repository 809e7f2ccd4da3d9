"""Alembic environment: migrates the connection ``arena.db.migrate`` hands over, or the database
named by ``sqlalchemy.url`` / ``ARENA_DATABASE_URL`` when run as ``alembic`` from a clone.

The whole upgrade runs in one transaction (SQLite and PostgreSQL both have transactional DDL),
under a lock (SQLite's write lock, a PostgreSQL advisory lock) so two processes starting at once
migrate one after the other instead of racing.
"""

from __future__ import annotations

from logging.config import fileConfig
from typing import Any

from alembic import context
from sqlalchemy.engine import Connection

from arena.core.settings import Settings
from arena.db.engine import make_engine, writer
from arena.db.migrate import MIGRATION_LOCK_KEY
from arena.db.models import is_mapped, metadata


def _owned_by_arena(name: str | None, type_: Any, parents: Any) -> bool:
    """APScheduler creates and owns its job-store table; migrations leave it alone. The full-text
    index is the arena's but written as hand-made DDL (``arena.db.models.is_mapped``)."""
    return not (type_ == "table" and name == "apscheduler_jobs") and is_mapped(name, type_, parents)


def _migrate(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,  # SQLite cannot ALTER most things: future revisions copy tables
        transactional_ddl=True,
        compare_type=True,
        include_name=_owned_by_arena,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
        context.run_migrations()


def _run_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url") or Settings().db_url
    engine = make_engine(url)
    try:
        with writer(engine).begin() as connection:
            _migrate(connection)
    finally:
        engine.dispose()


def _run_offline() -> None:
    url = context.config.get_main_option("sqlalchemy.url") or Settings().db_url
    context.configure(url=url, target_metadata=metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if context.config.config_file_name is not None:
    fileConfig(context.config.config_file_name, disable_existing_loggers=False)

if context.is_offline_mode():
    _run_offline()
else:
    _run_online()
