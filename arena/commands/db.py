"""``arena db ...``: schema migrations of the database (``--database-url`` or ``ARENA_DATABASE_URL``)."""

from __future__ import annotations

import typer

from arena.commands.options import DatabaseOption, database_url_or_default
from arena.commands.terminal import plain_console
from arena.db.engine import redact_url
from arena.db.migrate import current_revision, head_revision, upgrade

app = typer.Typer(no_args_is_help=True, help="Database schema: upgrade, show the revision.")
console = plain_console(soft_wrap=True)


@app.command("upgrade")
def upgrade_command(database_url: DatabaseOption = None) -> None:
    """Migrate the database to the newest schema: the only command that upgrades one."""
    url = database_url_or_default(database_url)
    before = current_revision(url)
    upgrade(url)
    console.print(f"{redact_url(url)}: schema {before or 'empty'} → [green]{head_revision()}[/]")


@app.command("revision")
def revision_command(database_url: DatabaseOption = None) -> None:
    """Print the database's schema revision and the newest one this version knows."""
    url = database_url_or_default(database_url)
    current = current_revision(url)
    state = "[green]up to date[/]" if current == head_revision() else "[yellow]needs `arena db upgrade`[/]"
    console.print(f"{redact_url(url)}: {current or 'empty'} (newest {head_revision()}) — {state}")
