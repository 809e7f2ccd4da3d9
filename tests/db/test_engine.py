"""Engines: URL handling, SQLite tuned for several processes, one commit per unit of work."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import URL, Engine, create_engine, text
from sqlmodel import Session, func, select

from arena.db.engine import (
    make_engine,
    normalize_url,
    redact_url,
    relaxed_commits,
    session_scope,
    with_prelude,
)
from arena.db.migrate import upgrade
from arena.db.models import JobRunRow, MarketRow
from tests.db.rows import T0, market


@pytest.mark.parametrize(
    ("url", "driver"),
    [
        ("postgresql://u:p@db/arena", "postgresql+psycopg"),
        ("postgres://u:p@db/arena", "postgresql+psycopg"),
        ("postgresql+psycopg://u@db/arena", "postgresql+psycopg"),
        ("sqlite:///x/arena.db", "sqlite"),
    ],
)
def test_urls_are_normalized_to_the_psycopg_driver(url: str, driver: str) -> None:
    assert normalize_url(url).drivername == driver


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u:secret@db/arena", "expected a sqlite:// or postgresql:// URL"),
        ("sqlite://", "in-memory SQLite"),
        ("sqlite:///:memory:", "in-memory SQLite"),
        ("not a url", "not a valid URL"),
    ],
)
def test_bad_urls_are_refused_without_leaking_the_password(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        normalize_url(url)
    assert "secret" not in str(caught.value)


def test_redacted_url_hides_the_password() -> None:
    assert redact_url("postgresql://arena:hunter2@db:5432/arena") == "postgresql://arena:***@db:5432/arena"


def test_sqlite_file_gets_its_folder_wal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'deep' / 'er' / 'arena.db'}")
    try:
        with engine.connect() as connection:
            pragmas = {
                name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
                for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
            }
        assert pragmas == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 30000, "synchronous": 1}
        assert (tmp_path / "deep" / "er" / "arena.db").exists()
    finally:
        engine.dispose()


def test_opening_a_new_database_waits_while_another_process_writes_it(tmp_path: Path) -> None:
    """Switching a file to WAL ignores busy_timeout, so the engine must wait for it itself."""
    path = tmp_path / "arena.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)  # first there, no WAL
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE early (x)")
    threading.Timer(0.3, other.execute, args=("COMMIT",)).start()
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        engine.dispose()
        other.close()


def test_session_scope_commits_once_at_the_end(engine: Engine) -> None:
    with session_scope(engine) as session:
        session.add(market("manifold:a"))
        session.flush()
        with Session(engine) as outsider:  # another connection sees nothing before the commit
            assert outsider.get(MarketRow, "manifold:a") is None
    with Session(engine) as reader:
        assert reader.get(MarketRow, "manifold:a") is not None


def test_session_scope_rolls_back_everything_on_error(engine: Engine) -> None:
    # The block is the unit of work whose error is under test, so it holds several statements.
    with pytest.raises(RuntimeError, match="boom"), session_scope(engine) as session:  # noqa: PT012
        session.add(market("manifold:a"))
        session.flush()
        session.add(market("manifold:b"))
        raise RuntimeError("boom")
    with Session(engine) as reader:
        assert reader.exec(select(func.count()).select_from(MarketRow)).one() == 0


def test_concurrent_writers_wait_for_each_other_instead_of_failing(db_url: str) -> None:
    """Several engines (as several processes would) write at once; every unit of work lands."""
    upgrade(db_url)
    writers, per_writer = 4, 25
    errors: list[BaseException] = []

    def work(n: int) -> None:
        engine = make_engine(db_url)
        try:
            for _ in range(per_writer):
                with session_scope(engine) as session:
                    # Read, then write, in one transaction: the pattern that deadlocks under BEGIN DEFERRED.
                    count = session.exec(select(func.count()).select_from(JobRunRow)).one()
                    session.add(JobRunRow(job=f"w{n}", started_at=T0, message=str(count)))
        except BaseException as exc:  # reported below: a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    engine = make_engine(db_url)
    try:
        with session_scope(engine, write=False) as session:
            total = session.exec(select(func.count()).select_from(JobRunRow)).one()
        assert total == writers * per_writer
    finally:
        engine.dispose()


def test_sqlite_read_only_scope_does_not_wait_for_the_writer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        with session_scope(engine) as writer:
            writer.add(JobRunRow(job="w", started_at=T0))
            writer.flush()
            with session_scope(engine, write=False) as reader:  # would wait 30 s under BEGIN IMMEDIATE
                count = select(func.count()).select_from(JobRunRow)
                assert reader.exec(count).one() == 0
    finally:
        engine.dispose()


def test_relaxed_commits_skip_the_flush_wait_of_write_units_only(engine: Engine) -> None:
    """A ``relaxed_commits`` engine's write units commit with ``synchronous_commit = off`` on
    PostgreSQL; its read units, the plain engine and the pooled connection afterwards keep the
    server's durable default. On SQLite the engine writes as before."""
    relaxed = relaxed_commits(engine)
    with session_scope(relaxed) as session:
        session.add(market("manifold:a"))
        relaxed_setting = _synchronous_commit(session)
    with session_scope(relaxed, write=False) as session:
        read_setting = _synchronous_commit(session)
    with session_scope(engine) as session:
        plain_setting = _synchronous_commit(session)
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(MarketRow)).one() == 1  # committed
    if engine.dialect.name == "postgresql":
        assert (relaxed_setting, read_setting, plain_setting) == ("off", "on", "on")


def _synchronous_commit(session: Session) -> str | None:
    if session.get_bind().dialect.name != "postgresql":
        return None
    return str(session.connection().exec_driver_sql("SHOW synchronous_commit").scalar_one())


@pytest.mark.postgres
def test_a_quiet_pooled_connection_is_reused_unpinged_and_a_cut_one_replaced(
    postgres_database: URL, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pooled PostgreSQL connection whose socket is quiet is handed out without a ping; one
    the server closed meanwhile (a restart terminates every backend) is pinged, dropped and
    replaced, so the next unit of work runs instead of failing."""
    engine = make_engine(postgres_database)
    admin = create_engine(postgres_database, isolation_level="AUTOCOMMIT")
    pings: list[object] = []
    ping = engine.dialect.do_ping

    def counted(dbapi_connection: object) -> bool:
        pings.append(dbapi_connection)
        return ping(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    try:
        backends = [_backend(engine) for _ in range(3)]
        assert len(set(backends)) == 1
        assert pings == []
        with admin.connect() as connection:
            connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": backends[0]})
            gone = text("SELECT 1 FROM pg_stat_activity WHERE pid = :pid")
            while connection.execute(gone, {"pid": backends[0]}).first():
                time.sleep(0.01)
        replaced = _backend(engine)
        assert replaced != backends[0]
        assert len(pings) == 1
        assert _backend(engine) == replaced
    finally:
        engine.dispose()
        admin.dispose()


@pytest.mark.postgres
def test_postgres_units_run_at_read_committed_whatever_the_database_default(postgres_database: URL) -> None:
    """Claims and fences are written for READ COMMITTED, and the read units' autocommit reads
    equal read transactions only at it: a database whose default is stricter changes neither."""
    admin = create_engine(postgres_database, isolation_level="AUTOCOMMIT")
    name = postgres_database.database
    with admin.connect() as connection:
        connection.execute(
            text(f"ALTER DATABASE \"{name}\" SET default_transaction_isolation = 'repeatable read'")
        )
    plain, engine = create_engine(postgres_database), make_engine(postgres_database)  # new sessions
    try:
        with plain.connect() as connection:  # the database's default applies to an engine left as is
            assert connection.execute(text("SHOW transaction_isolation")).scalar_one() == "repeatable read"
        with session_scope(engine) as session:
            assert session.execute(text("SHOW transaction_isolation")).scalar_one() == "read committed"
        # A read unit runs each statement on its own (autocommit): one statement sees one snapshot
        # at any level, so it reads exactly as a read transaction at READ COMMITTED did.
        with session_scope(engine, write=False) as session:
            assert session.connection().connection.dbapi_connection.autocommit  # type: ignore[union-attr]
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'ALTER DATABASE "{name}" RESET default_transaction_isolation'))
        for each in (plain, engine, admin):
            each.dispose()


def _backend(engine: Engine) -> int:
    with session_scope(engine) as session:
        pid: int = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
    return pid


class _Held:
    """A prelude holding one market row back until a write unit commits it."""

    def __init__(self) -> None:
        self.rows = [market("manifold:held")]
        self.committed = 0

    def write(self, session: Session) -> None:
        session.add_all([row.model_copy() for row in self.rows])

    def written(self) -> None:
        self.rows, self.committed = [], self.committed + 1


def test_a_prelude_rides_with_the_next_write_unit_and_survives_its_rollback(engine: Engine) -> None:
    """``with_prelude``: read units leave the held rows alone; a write unit that rolls back takes
    them along (nothing stored, still held); the next one that commits stores them with its own."""
    held = _Held()
    engine_with = with_prelude(engine, held)
    with session_scope(engine_with, write=False) as session:
        session.exec(select(func.count()).select_from(MarketRow)).one()
    with pytest.raises(RuntimeError, match="refused"):
        _refused_write(engine_with)
    assert (_markets(engine), held.committed, len(held.rows)) == ([], 0, 1)
    with session_scope(engine_with) as session:
        session.add(market("manifold:own"))
    assert (_markets(engine), held.committed) == (["manifold:held", "manifold:own"], 1)
    with session_scope(engine_with) as session:
        session.add(market("manifold:next"))
    assert held.committed == 2 and len(_markets(engine)) == 3


def _refused_write(engine: Engine) -> None:
    with session_scope(engine) as session:
        session.add(market("manifold:own"))
        raise RuntimeError("refused")


def _markets(engine: Engine) -> list[str]:
    with Session(engine) as session:
        return sorted(session.exec(select(MarketRow.id)).all())


def test_a_snapshot_read_unit_sees_one_moment_while_another_unit_commits(engine: Engine) -> None:
    """A ledger is rebuilt from its fills, then its position rows: a commit landing between the
    two reads must not show a position open in one and not the other. A ``snapshot`` read unit
    sees the database as of its first read, on both backends; a plain read unit on PostgreSQL
    runs each statement on its own and sees the commit."""

    def count(session: Session) -> int:
        return session.exec(select(func.count()).select_from(MarketRow)).one()

    def commit_a_market(market_id: str) -> None:
        with session_scope(engine) as other:
            other.add(market(market_id))

    with session_scope(engine, write=False, snapshot=True) as session:
        before = count(session)
        commit_a_market("manifold:during-snapshot")
        assert count(session) == before
    if engine.dialect.name == "postgresql":
        with session_scope(engine, write=False) as session:
            before = count(session)
            commit_a_market("manifold:during-plain-read")
            assert count(session) == before + 1
