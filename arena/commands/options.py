"""What every command shares: the ``--database-url`` option, opening the database, one-line errors.

Kept apart from any one command so that each command module imports only this, and every command
names and opens its database the same way (``--database-url``, else ``ARENA_DATABASE_URL``, else
the local SQLite file).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from pydantic import ValidationError
from sqlalchemy import Engine

from arena.commands.terminal import echo, one_line
from arena.db.engine import make_engine, normalize_url, redact_url
from arena.db.revision import SCHEMA_HEAD, stored_revision

if TYPE_CHECKING:
    from arena.core.settings import Settings

DatabaseOption = Annotated[
    str | None,
    typer.Option("--database-url", help="Database URL (default: ARENA_DATABASE_URL or .arena/arena.db)."),
]


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr and a non-zero exit: the house style for bad input. The message often
    quotes others' text (a market question, a provider's error): its control characters are
    spelt out and its newlines kept on the line (``terminal.one_line``)."""
    echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def open_engine(database_url: str | None) -> Engine:
    """The arena database (created and migrated to the current schema if needed).

    A current database costs one query; Alembic is imported only when there is something to
    migrate (it costs more start-up than ``arena cohort list`` itself).
    """
    url = database_url_or_default(database_url)
    try:
        engine = make_engine(url)
        with engine.connect() as connection:
            current = stored_revision(connection) == SCHEMA_HEAD
        if not current:
            from arena.db.migrate import ensure_schema

            ensure_schema(engine)
        return engine
    except ValueError as exc:
        fail(str(exc))
    except Exception as exc:  # connection refused, bad credentials...: one line, URL redacted
        fail(f"cannot open the database {redact_url(url)}: {type(exc).__name__}: {exc}")


@contextmanager
def launching(database_url: str | None) -> Iterator[Engine]:
    """``open_engine`` for a command that launches a cohort. When the command fails before any
    cohort is stored in a SQLite file it created (a config refused at launch), it deletes that
    file again, and the folders it made for it: a failed launch leaves no empty database
    behind. A database that existed before, or one holding a cohort, is never touched."""
    url = database_url_or_default(database_url)
    path = _new_sqlite_file(url)
    made = [p for p in (path.parents if path else []) if not p.exists()]
    engine = open_engine(url)
    try:
        yield engine
    except BaseException as exc:
        if path is not None and not _succeeded(exc) and _holds_no_cohort(engine):
            engine.dispose()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            for folder in made:  # deepest first; a folder something else was put in stays
                with suppress(OSError):
                    folder.rmdir()
        raise


def _new_sqlite_file(url: str) -> Path | None:
    """The SQLite file ``url`` names, if it does not exist yet; None otherwise (or PostgreSQL)."""
    try:
        parsed = normalize_url(url)
    except ValueError:
        return None  # open_engine says what is wrong with it
    if parsed.get_backend_name() != "sqlite":
        return None
    path = Path(str(parsed.database)).absolute()
    return None if path.exists() else path


def _succeeded(exc: BaseException) -> bool:
    return isinstance(exc, typer.Exit) and exc.exit_code == 0


def _holds_no_cohort(engine: Engine) -> bool:
    try:
        with engine.connect() as connection:
            return int(connection.exec_driver_sql("SELECT count(*) FROM cohort").scalar_one()) == 0
    except Exception:  # unreadable: not provably empty, so kept
        return False


def database_url_or_default(database_url: str | None) -> str:
    """``--database-url`` when given, else the environment's or the default local SQLite file."""
    return database_url or process_settings().db_url


def process_settings() -> Settings:
    """The ``ARENA_*`` settings of this process, or one line naming each variable that is wrong.

    ``arena.core.settings`` (pydantic-settings, about 40 ms of start-up) is imported here, when a command
    needs a setting: a command given ``--database-url`` reads none."""
    from arena.core.settings import Settings

    try:
        return Settings()
    except ValidationError as exc:
        fail(
            "; ".join(
                f"ARENA_{'_'.join(str(p) for p in err['loc']).upper()}: "
                + str(err["msg"]).removeprefix("Value error, ")
                for err in exc.errors()
            )
        )


def portable_command(args: Sequence[str]) -> str:
    """The command line as recorded in a dataset: absolute paths cut to their last component, so a
    published dataset names its source folder, never the home directory of the machine it was
    made on."""
    return shlex.join(PurePath(a).name if PurePath(a).is_absolute() else a for a in args)
