"""What every command shares: the ``--database-url`` option, opening the database, one-line errors.

Kept apart from any one command so that each command module imports only this, and every command
names and opens its database the same way (``--database-url``, else ``ARENA_DATABASE_URL``, else
the local SQLite file).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from pydantic import ValidationError
from sqlalchemy import Engine

from arena.db.engine import make_engine, redact_url
from arena.db.revision import SCHEMA_HEAD, stored_revision

if TYPE_CHECKING:
    from arena.core.settings import Settings

DatabaseOption = Annotated[
    str | None,
    typer.Option("--database-url", help="Database URL (default: ARENA_DATABASE_URL or .arena/arena.db)."),
]


BAD_INPUT = 2  # an argument, option, id, file or config that cannot be used (docs/cli.md)
FAILED = 1  # the command ran, but what it did or found failed


def fail(message: str, code: int = BAD_INPUT) -> NoReturn:
    """One line on stderr and a non-zero exit: the house style for bad input."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def unknown_cohort(cohort_id: str) -> str:
    """What every command says of a cohort id that names no cohort (exit ``BAD_INPUT``)."""
    return f"no cohort with id {cohort_id!r} (see `arena cohort list`)"


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
