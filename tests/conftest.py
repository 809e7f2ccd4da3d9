"""Shared fixtures: a real database on each backend, at the schema's head revision.

``db_url`` runs a test on SQLite (a file in the test's tmp dir) and on PostgreSQL (a schema of
its own, selected through ``search_path``, inside one database created for the test session and
dropped at its end). ``engine`` and ``session`` give an empty database already at head.
PostgreSQL is skipped only when ``ARENA_SKIP_POSTGRES=1`` (refused under ``CI=true``: CI must run
both backends); otherwise an unreachable server ends the run with one line saying how to point at
a server or skip, never a silent skip or a driver traceback. ``ARENA_TEST_POSTGRES_URL`` names
the server.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import URL
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from arena.db.engine import make_engine, normalize_url
from arena.db.migrate import upgrade
from arena.db.models import metadata
from tests import db_owner

POSTGRES_URL = os.environ.get("ARENA_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Before any test runs: when PostgreSQL tests are selected, the server must answer (one line
    saying what to do otherwise), and CI may not skip them."""
    if not any(item.get_closest_marker("postgres") for item in items):
        return
    if os.environ.get("ARENA_SKIP_POSTGRES") == "1":
        if os.environ.get("CI") == "true":
            pytest.exit("ARENA_SKIP_POSTGRES=1 under CI=true: CI must test the PostgreSQL path", returncode=3)
        return
    server = normalize_url(POSTGRES_URL)
    probe = create_engine(server, pool_pre_ping=False)
    try:
        with probe.connect():
            pass
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
        pytest.exit(
            f"PostgreSQL unreachable at {server.render_as_string(hide_password=True)} ({reason}); "
            "start it, point ARENA_TEST_POSTGRES_URL at a server, or set ARENA_SKIP_POSTGRES=1 "
            "to run the SQLite half only",
            returncode=3,
        )
    finally:
        probe.dispose()


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[URL]:
    """A database of this test session's own on the test server, dropped afterwards."""
    if os.environ.get("ARENA_SKIP_POSTGRES") == "1":
        pytest.skip("ARENA_SKIP_POSTGRES=1")
    server = normalize_url(POSTGRES_URL)
    name = f"{db_owner.PREFIX}{os.getpid()}_{secrets.token_hex(4)}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            db_owner.drop_orphans(connection)  # only databases whose owner is provably gone
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
            db_owner.mark(connection, name, db_owner.this_owner())
        yield server.set(database=name)
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgres``: tests using ``db_url`` or ``engine`` run once on each."""
    return str(request.param)


@pytest.fixture
def db_url(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """An empty database (no tables, no revision) on the parametrized backend, as a URL string."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'arena.db'}"
        return
    database: URL = request.getfixturevalue("postgres_database")
    schema = f"t_{secrets.token_hex(6)}"
    admin = create_engine(database, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE SCHEMA {schema}")
        yield _in_schema(database, schema)
        with admin.connect() as connection:
            # A transaction a test left open makes the drop fail instead of hang.
            connection.exec_driver_sql("SET lock_timeout = '10s'")
            connection.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    finally:
        admin.dispose()


@pytest.fixture(scope="session")
def sqlite_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once; each ``engine`` test works on a copy of it."""
    path = tmp_path_factory.mktemp("head") / "arena.db"
    upgrade(f"sqlite:///{path}")  # disposes its engine: the WAL is checkpointed into the file
    return path


@pytest.fixture(scope="session")
def postgres_head(postgres_database: URL) -> str:
    """A schema migrated to head once; each ``engine`` test empties it afterwards."""
    admin = create_engine(postgres_database, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.exec_driver_sql("CREATE SCHEMA arena_head")
    admin.dispose()
    url = _in_schema(postgres_database, "arena_head")
    upgrade(url)
    return url


@pytest.fixture
def engine(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An engine on an empty database at the head revision, on the parametrized backend.

    Fast: SQLite copies a migrated file, PostgreSQL reuses one migrated schema and empties it
    (rows deleted, id sequences restarted) after the test. So do not change the schema here:
    migration tests use ``db_url``.
    """
    if backend == "sqlite":
        path = tmp_path / "arena.db"
        shutil.copyfile(request.getfixturevalue("sqlite_head"), path)
        engine = make_engine(f"sqlite:///{path}")
        yield engine
        engine.dispose()
        return
    engine = make_engine(request.getfixturevalue("postgres_head"))
    try:
        yield engine
        _empty_postgres(engine)
    finally:
        engine.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A plain session on ``engine``; the test commits (or not) as it needs."""
    with Session(engine, expire_on_commit=False) as session:
        yield session


def _empty_postgres(engine: Engine) -> None:
    """Delete every row and restart the id sequences: 20x faster than TRUNCATE on small tables."""
    tables = metadata.sorted_tables
    serials = [t for t in tables if "id" in t.c and t.c.id.autoincrement is not False and t.c.id.primary_key]
    restarts = ", ".join(f"setval(pg_get_serial_sequence('{t.name}', 'id'), 1, false)" for t in serials)
    with engine.begin() as connection:
        connection.exec_driver_sql("SET LOCAL lock_timeout = '10s'")  # an open transaction fails, not hangs
        for table in reversed(tables):
            connection.execute(table.delete())
        connection.exec_driver_sql(f"SELECT {restarts}")


def _in_schema(database: URL, schema: str) -> str:
    """The database URL with ``schema`` first on the search path (tables, alembic_version)."""
    return database.set(query={"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
