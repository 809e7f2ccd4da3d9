"""``arena db ...``: the database's schema (upgrade, revision) and retention (prune), on
``--database-url`` or ``ARENA_DATABASE_URL``."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

import typer

from arena.commands.options import DatabaseOption, database_url_or_default, fail, open_engine
from arena.commands.terminal import plain_console
from arena.core.clock import SystemClock
from arena.core.config_types import format_duration, parse_duration
from arena.db.engine import redact_url
from arena.db.migrate import current_revision, head_revision, upgrade
from arena.scheduling.retention import Retention, prunable, prune

app = typer.Typer(
    no_args_is_help=True, help="Database: upgrade the schema, show its revision, prune old rows."
)
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


DEFAULT = Retention()


def _kept(default: timedelta, what: str) -> Any:
    return typer.Option(
        help=f"{what} A duration: 7d, 12h, 30m.", metavar="DURATION", show_default=format_duration(default)
    )


@app.command("prune")
def prune_command(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be deleted, by table; delete nothing.")
    ] = False,
    job_runs: Annotated[
        str, _kept(DEFAULT.job_runs, "Keep runs of serve's jobs this long (each job's last always).")
    ] = "",
    units: Annotated[str, _kept(DEFAULT.units, "Keep finished work units this long.")] = "",
    snapshots: Annotated[
        str,
        _kept(
            DEFAULT.snapshots, "Keep prices of markets no cohort offered or held this long after they close."
        ),
    ] = "",
    processes: Annotated[
        str, _kept(DEFAULT.processes, "Keep rows of stopped or silent serve and worker processes this long.")
    ] = "",
    database_url: DatabaseOption = None,
) -> None:
    """Delete old job runs, finished units and prices nothing reads; never what a score needs."""
    keep = Retention(
        job_runs=_duration("--job-runs", job_runs, DEFAULT.job_runs),
        units=_duration("--units", units, DEFAULT.units),
        snapshots=_duration("--snapshots", snapshots, DEFAULT.snapshots),
        processes=_duration("--processes", processes, DEFAULT.processes),
    )
    engine = open_engine(database_url)
    now = SystemClock().now()
    counts = prunable(engine, now, keep) if dry_run else prune(engine, now, keep)
    verb = "would delete" if dry_run else "deleted"
    for table, n in counts.items():
        console.print(f"{table}: {verb} {n} row(s)")
    if dry_run:
        console.print("Nothing deleted (--dry-run). Run without it to delete these rows.")


def _duration(option: str, value: str, default: timedelta) -> timedelta:
    """The option's duration (``default`` when not given), or one line and exit 2."""
    if not value:
        return default
    try:
        return parse_duration(value)
    except ValueError as exc:
        fail(f"{option}: {exc}")
