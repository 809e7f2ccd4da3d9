"""What every command shares: the ``--database-url`` option, opening the database, one-line errors.

Kept apart from any one command so that each command module imports only this, and every command
names and opens its database the same way (``--database-url``, else ``ARENA_DATABASE_URL``, else
the local SQLite file).
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from sqlalchemy import Engine

from arena.commands.terminal import echo, one_line
from arena.db.engine import make_engine, normalize_url, redact_url
from arena.db.revision import SCHEMA_HEAD, schema_mismatch, stored_revision

if TYPE_CHECKING:
    from arena.core.settings import Settings

T = TypeVar("T")

DatabaseOption = Annotated[
    str | None,
    typer.Option("--database-url", help="Database URL (default: ARENA_DATABASE_URL or .arena/arena.db)."),
]


BAD_INPUT = 2  # an argument, option, id, file or config that cannot be used (docs/cli.md)
FAILED = 1  # the command ran, but what it did or found failed


def fail(message: str, code: int = BAD_INPUT) -> NoReturn:
    """One line on stderr and a non-zero exit: the house style for bad input. The message often
    quotes others' text (a market question, a provider's error): its control characters are
    spelt out and its newlines kept on the line (``terminal.one_line``)."""
    echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def unknown_cohort(cohort_id: str) -> str:
    """What every command says of a cohort id that names no cohort (exit ``BAD_INPUT``)."""
    return f"no cohort with id {cohort_id!r} (see `arena cohort list`)"


def open_engine(database_url: str | None) -> Engine:
    """The arena database for a command that writes: an empty one is created at the current
    schema; one at another revision is refused in one line (``arena db upgrade`` upgrades it).

    A current database costs one query; Alembic is imported only to create a database (it costs
    more start-up than ``arena cohort list`` itself).
    """
    url = database_url_or_default(database_url)
    engine, revision = _opened(url)
    if revision is None:
        from arena.db.migrate import create_if_empty

        _attempt(url, lambda: create_if_empty(engine))
    elif revision != SCHEMA_HEAD:
        fail(schema_mismatch(redact_url(url), revision))
    return engine


def open_reader(database_url: str | None) -> Engine:
    """The arena database for a command that only reads: never created nor migrated; a missing
    or empty database, one at another revision or one that cannot be reached is refused in one
    line (``arena.db.readiness``)."""
    from arena.db.readiness import read_problem

    url = database_url_or_default(database_url)
    problem = read_problem(url)
    if problem is not None:
        fail(problem)
    return make_engine(url)


def _opened(url: str) -> tuple[Engine, str | None]:
    """An engine on ``url`` and the database's schema revision, or one line and exit 2."""
    engine = _attempt(url, lambda: make_engine(url))
    return engine, _attempt(url, lambda: _revision_of(engine))


def _revision_of(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return stored_revision(connection)


def _attempt(url: str, work: Callable[[], T]) -> T:
    """``work()``; a bad URL, or a server that refuses or cannot be reached, is one line and exit 2."""
    try:
        return work()
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


def schema_ready(url: str, say: Callable[[str], None]) -> None:
    """Wait for the database (capped backoff, ``say`` once per attempt) and create its schema if
    it is empty; one at another revision is refused in one line (``arena db upgrade``, never a
    long-running process, upgrades a database). For ``arena worker`` and ``arena serve``."""
    from sqlalchemy.exc import DBAPIError

    from arena.db.migrate import SchemaVersionError, create_if_empty  # Alembic: `arena status` needs none
    from arena.workers.backoff import retrying, unreachable_reason

    try:
        retrying(lambda: create_if_empty(url), say=say, stop=threading.Event())
    except (SchemaVersionError, ValueError) as exc:
        fail(str(exc))
    except DBAPIError as exc:  # refused login, missing database...: waiting would not help
        fail(f"cannot open the database {redact_url(url)}: {unreachable_reason(exc)}")


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
                (f"ARENA_{'_'.join(str(p) for p in err['loc']).upper()}: " if err["loc"] else "")
                + str(err["msg"]).removeprefix("Value error, ")
                for err in exc.errors()
            )
        )


def portable_command(args: Sequence[str]) -> str:
    """The command line as recorded in a dataset: absolute paths cut to their last component, so a
    published dataset names its source folder, never the home directory of the machine it was
    made on."""
    return shlex.join(PurePath(a).name if PurePath(a).is_absolute() else a for a in args)
