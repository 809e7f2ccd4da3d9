"""Databases are created and upgraded by Alembic only, and the migrations match the models."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import traceback
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect, text
from sqlmodel import func, select

from arena.corpus.rowids import document_rowid
from arena.corpus.search import search_news
from arena.db.engine import make_engine, session_scope
from arena.db.migrate import (
    MIGRATIONS_DIR,
    SchemaVersionError,
    current_revision,
    downgrade,
    ensure_schema,
    head_revision,
    upgrade,
)
from arena.db.models import (
    FULL_TEXT_TABLE,
    JobRunRow,
    PortfolioCloseRow,
    PortfolioSnapshotRow,
    is_mapped,
    metadata,
)
from arena.db.revision import SCHEMA_HEAD
from tests.db.rows import build_world, cohort

REPO = Path(__file__).resolve().parents[2]


def schema_diff(url: str) -> list[object]:
    """What autogenerate would still have to write to make the database match the models."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection,
                opts={"compare_type": True, "compare_server_default": True, "include_name": is_mapped},
            )
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def table_names(url: str, *, mapped_only: bool = True) -> set[str]:
    """The database's tables; by default those the models describe (the full-text index's
    tables, built by hand-written DDL, left out)."""
    engine = make_engine(url)
    try:
        return {t for t in inspect(engine).get_table_names() if not mapped_only or is_mapped(t, "table", {})}
    finally:
        engine.dispose()


def triggers(engine: Engine, table: str) -> list[str]:
    """The SQL of ``table``'s triggers (the inspector does not reflect triggers)."""
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            query = "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?"
        else:
            query = (
                "SELECT action_statement FROM information_schema.triggers "
                "WHERE event_object_table = %s AND trigger_schema = current_schema()"
            )
        return sorted(str(row[0]) for row in connection.exec_driver_sql(query, (table,)))


def test_head_matches_the_models(db_url: str) -> None:
    assert current_revision(db_url) is None
    upgrade(db_url)
    assert current_revision(db_url) == head_revision()
    assert schema_diff(db_url) == []


def test_the_expected_revision_is_alembics_head() -> None:
    """Reading commands check a database against ``SCHEMA_HEAD`` without Alembic: a new migration
    must move it."""
    assert head_revision() == SCHEMA_HEAD


def reflected_schema(url: str) -> dict[str, dict[str, object]]:
    """Every table as the database itself describes it: columns, keys, constraints and indexes.

    Clause objects (a partial index's ``WHERE``) are compared as their SQL text.
    """
    engine = make_engine(url)
    try:
        inspector = inspect(engine)
        return {
            table: {
                "columns": repr(inspector.get_columns(table)),
                "primary_key": repr(inspector.get_pk_constraint(table)),
                "foreign_keys": sorted(map(repr, inspector.get_foreign_keys(table))),
                "unique": sorted(map(repr, inspector.get_unique_constraints(table))),
                "checks": sorted(map(repr, inspector.get_check_constraints(table))),
                "indexes": sorted(
                    repr(
                        {**index, "dialect_options": {k: str(v) for k, v in index["dialect_options"].items()}}
                    )
                    for index in inspector.get_indexes(table)
                ),
                "triggers": triggers(engine, table),
            }
            for table in sorted(inspector.get_table_names())
            if table != "alembic_version"
        }
    finally:
        engine.dispose()


def test_migrations_build_exactly_the_schema_of_the_models(db_url: str) -> None:
    """An upgraded database and one created straight from the models are identical.

    ``compare_metadata`` (above) does not look at check constraints, partial-index predicates or
    deferrable foreign keys, which carry the arena's idempotency rules, so the reflected schemas
    are compared in full as well.
    """
    upgrade(db_url)
    migrated = reflected_schema(db_url)
    assert {t for t in migrated if is_mapped(t, "table", {})} == set(metadata.tables)
    assert any("ck_fill_kind" in check for check in migrated["fill"]["checks"])  # not vacuous
    # The full-text index (hand-written DDL) is part of the comparison too, on each backend.
    if db_url.startswith("sqlite"):
        assert FULL_TEXT_TABLE in migrated and len(migrated["corpus_document"]["triggers"]) == 2
    else:
        assert "tsvector" in migrated["corpus_document"]["columns"]
        assert "gin" in str(migrated["corpus_document"]["indexes"])
    downgrade(db_url, "base")
    engine = make_engine(db_url)
    try:
        metadata.create_all(engine)
    finally:
        engine.dispose()
    assert reflected_schema(db_url) == migrated


def test_downgrade_to_base_then_upgrade_again(db_url: str) -> None:
    upgrade(db_url)
    downgrade(db_url, "base")
    assert table_names(db_url, mapped_only=False) == {"alembic_version"}
    assert current_revision(db_url) is None
    upgrade(db_url)
    assert table_names(db_url) == set(metadata.tables) | {"alembic_version"}
    assert schema_diff(db_url) == []


def test_ensure_schema_upgrades_once_then_does_nothing(db_url: str) -> None:
    ensure_schema(db_url)
    ensure_schema(db_url)
    assert current_revision(db_url) == head_revision()


def test_processes_starting_together_migrate_one_after_the_other(db_url: str) -> None:
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        list(pool.map(ensure_schema, [db_url] * 2))  # re-raises any process's error
    assert current_revision(db_url) == head_revision()
    assert schema_diff(db_url) == []


def test_threads_starting_together_migrate_one_after_the_other(db_url: str) -> None:
    errors: list[str] = []

    def start() -> None:
        try:
            ensure_schema(db_url)
        except BaseException:  # collected: a thread's exception would otherwise vanish
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert current_revision(db_url) == head_revision()


def test_upgrading_to_0002_fills_portfolio_close_from_stored_marks(db_url: str) -> None:
    """A database written before ``portfolio_close`` existed scores the same after the upgrade."""
    upgrade(db_url)
    engine = make_engine(db_url)
    world = build_world(engine)  # through today's models, so at head: then back to 0001 with its rows
    downgrade(db_url, "0001")
    day = datetime(2025, 3, 1, tzinfo=UTC)
    instants = [day + timedelta(hours=h) for h in (1, 23.99, 24, 30, 47)]
    with session_scope(engine) as session:
        for agent_id in world.agent_ids:
            for at in instants:
                session.add(
                    PortfolioSnapshotRow(
                        agent_id=agent_id,
                        cohort_id=world.cohort_id,
                        marked_at=at,
                        cash=Decimal(1),
                        positions_value=Decimal(0),
                        total_value=Decimal(1),
                        realized_pnl=Decimal(0),
                        unrealized_pnl=Decimal(0),
                    )
                )
    upgrade(db_url)
    with session_scope(engine, write=False) as session:
        closes = {(c.agent_id, c.day, c.closed_at) for c in session.exec(select(PortfolioCloseRow))}
    engine.dispose()
    assert closes == {
        (agent_id, at.date(), at)
        for agent_id in world.agent_ids
        for at in (instants[1], instants[4])  # 23:59:24 on the 1st, 23:00 on the 2nd
    }


def test_upgrading_to_0007_keys_replay_units_and_fails_duplicates_of_the_old_race(db_url: str) -> None:
    """Before 0007 two simultaneous queueings of one cohort could make two unfinished units; the
    upgrade keeps the oldest and fails the others (naming it), so the unique index can be built."""
    upgrade(db_url, "0006")
    engine = make_engine(db_url)
    with session_scope(engine) as session:
        session.add(cohort("c1"))
    with engine.begin() as connection:
        for state in ("done", "queued", "queued", "running"):
            connection.execute(
                text(
                    "INSERT INTO work_unit (kind, cohort_id, state, attempts, available_at, enqueued_at) "
                    "VALUES ('replay', 'c1', :state, 0, :at, :at)"
                ),
                {"state": state, "at": "2026-01-01 00:00:00+00:00"},
            )
    upgrade(db_url)
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT id, state, dedup_key, error FROM work_unit ORDER BY id"
        ).all()
    engine.dispose()
    assert [tuple(r) for r in rows] == [
        (1, "done", "c1", None),
        (2, "queued", "c1", None),
        (3, "failed", "c1", "duplicate of unit 2 (migration 0007)"),
        (4, "failed", "c1", "duplicate of unit 2 (migration 0007)"),
    ]


def test_a_database_from_a_newer_arena_is_refused_clearly(db_url: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = 'f00dfeed'")
    engine.dispose()
    with pytest.raises(SchemaVersionError, match=r"f00dfeed.*newer arena version"):
        ensure_schema(db_url)


def test_engine_fixture_starts_empty_at_head(engine: Engine) -> None:
    """Tests sharing the PostgreSQL head schema must not see each other's rows or ids."""
    assert current_revision(engine) == head_revision()
    with session_scope(engine) as session:
        assert all(
            session.exec(select(func.count()).select_from(t)).one() == 0 for t in metadata.sorted_tables
        )
        run = JobRunRow(job="probe", started_at=datetime(2025, 1, 1, tzinfo=UTC))
        session.add(run)
        session.flush()
        assert run.id == 1


def test_revisions_do_not_import_application_code() -> None:
    """A revision must keep meaning what it meant when written, whatever the models become."""
    for revision in (MIGRATIONS_DIR / "versions").glob("*.py"):
        source = revision.read_text()
        assert "import arena" not in source and "from arena" not in source, revision.name


def test_migrations_ship_inside_the_package() -> None:
    assert Path(str(resources.files("arena.migrations"))) == MIGRATIONS_DIR
    assert (MIGRATIONS_DIR / "versions" / "__init__.py").exists()  # found by setuptools as a package
    assert (MIGRATIONS_DIR / "script.py.mako").exists()


def test_alembic_command_line_works_from_a_clone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    env = {**os.environ, "ARENA_DATABASE_URL": url}
    alembic = [sys.executable, "-m", "alembic", "-c", str(REPO / "alembic.ini")]
    done = subprocess.run(
        [*alembic, "upgrade", "head"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert current_revision(url) == head_revision()
    shown = subprocess.run([*alembic, "current"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert head_revision() in shown.stdout


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_upgrading_to_0009_puts_sqlite_corpus_ids_in_publish_order(db_url: str) -> None:
    """Documents imported before 0009 (ids in file order) get publish-ordered ids, their full-text
    entries move with them, and a search bounded by those ids finds exactly the earlier ones."""
    upgrade(db_url, "0008")
    engine = make_engine(db_url)
    published = ["2025-01-03 00:00:00.000000", "2025-01-01 00:00:00.500000", "2025-01-01 00:00:00.250000"]
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO corpus (id, name, source_file, document_count, dropped_json, deny_list_json) "
            "VALUES (1, 'news', 'news.jsonl', 3, '{}', '[]')"
        )
        for i, at in enumerate(published, start=1):
            connection.exec_driver_sql(
                "INSERT INTO corpus_document (id, corpus_id, doc_id, published_at, title, text) "
                "VALUES (?, 1, ?, ?, 'storm warning', 'a storm')",
                (i, f"d{i}", at),
            )
        connection.exec_driver_sql(
            "INSERT INTO corpus_document_fts(rowid, title, text) SELECT id, title, text FROM corpus_document"
        )
    upgrade(db_url)
    with engine.connect() as connection:
        ids = connection.exec_driver_sql("SELECT doc_id, id FROM corpus_document ORDER BY id").all()
        matched = (
            connection.exec_driver_sql(
                "SELECT rowid FROM corpus_document_fts WHERE corpus_document_fts MATCH 'storm' ORDER BY rowid"
            )
            .scalars()
            .all()
        )
        hits = search_news(connection, "news", "storm", k=5, before=datetime(2025, 1, 2, tzinfo=UTC))
    engine.dispose()
    assert [doc_id for doc_id, _ in ids] == ["d2", "d3", "d1"]  # same second: the earlier id first
    assert [rowid for _, rowid in ids] == [
        document_rowid(datetime(2025, 1, 1, tzinfo=UTC), 0),
        document_rowid(datetime(2025, 1, 1, tzinfo=UTC), 1),
        document_rowid(datetime(2025, 1, 3, tzinfo=UTC), 0),
    ]
    assert matched == [rowid for _, rowid in ids]  # the index follows the documents
    assert {hit.id for hit in hits} == {"d2", "d3"}


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_position_pages_keep_room_for_re_marks_on_postgres(db_url: str) -> None:
    """0010: ``position`` (re-marked at every replay write) is filled to 70% a page, so a re-mark's
    new row version stays on its page (a heap-only update); the downgrade restores the default."""

    def options() -> list[str] | None:
        engine = make_engine(db_url)
        try:
            with engine.connect() as connection:
                query = "SELECT reloptions FROM pg_class WHERE oid = to_regclass('position')"
                found: list[str] | None = connection.exec_driver_sql(query).scalar_one()
                return found
        finally:
            engine.dispose()

    upgrade(db_url)
    assert options() == ["fillfactor=70"]
    downgrade(db_url, "0009")
    assert options() is None
