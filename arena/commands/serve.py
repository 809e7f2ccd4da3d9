"""``arena serve`` (the live scheduler) and ``arena status`` (its jobs and their health)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from datetime import datetime
from types import FrameType

import typer
from rich.table import Table

from arena.commands.options import DatabaseOption, fail, open_engine, process_settings
from arena.commands.terminal import log_to_terminal, plain_console
from arena.commands.worker import print_queue
from arena.core.clock import SystemClock
from arena.db import leases
from arena.db.engine import make_engine
from arena.scheduling.status import job_statuses

console = plain_console()


def serve(
    poll: float = typer.Option(5.0, help="Seconds between lease checks (leader election)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every job run."),
    database_url: DatabaseOption = None,
) -> None:
    """Run the live scheduler: market sync, due rounds, marks, settlement, completion. Ctrl-C stops."""
    # The scheduler and every job's engine: only for this command, not for `arena status`.
    from arena.scheduling.jobs import lease_bounded
    from arena.scheduling.service import serve as serve_forever

    log_to_terminal(logging.INFO if verbose else logging.WARNING, "%(asctime)s %(name)s %(message)s")
    logging.getLogger("arena").setLevel(logging.INFO)
    settings = process_settings()
    lease = settings.leader_lease.total_seconds()
    if not 0 < poll <= lease / 3:
        fail(f"--poll {poll:g}: must be positive and at most a third of ARENA_LEADER_LEASE ({lease:g} s)")
    if database_url:  # the jobs open their own engines from the settings when they run
        os.environ["ARENA_DATABASE_URL"] = database_url
    migrated = open_engine(database_url)
    engine = make_engine(lease_bounded(migrated.url, settings))
    migrated.dispose()
    owner = leases.new_owner(f"{socket.gethostname()}:{os.getpid()}")
    stop = threading.Event()

    def _stop(signum: int, _frame: FrameType | None) -> None:
        console.print(f"[yellow]{signal.Signals(signum).name}: stopping after running jobs finish…[/]")
        stop.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    console.print(f"[bold]arena serve[/] as [cyan]{owner}[/] — Ctrl-C to stop")
    serve_forever(engine, SystemClock(), owner, stop, poll=poll, settings=settings)


def status(database_url: DatabaseOption = None) -> None:
    """Show the scheduler's leader and, per job, last and next run, outcome and recent failures."""
    settings = process_settings()
    engine = open_engine(database_url)
    now = SystemClock().now()
    held = leases.holder(engine)
    if held is None or held.expires_at < now:
        console.print("Scheduler: [yellow]not running[/] (start it with [bold]arena serve[/])")
    else:
        console.print(f"Scheduler: [green]running[/] as {held.owner} (lease until {_fmt(held.expires_at)})")
    table = Table(title="Jobs")
    for column in ("job", "every", "last run", "outcome", "next run", "failures 24h", "message"):
        table.add_column(column)
    failing = False
    for job in job_statuses(engine, now, settings):
        outcome = {None: "[dim]—[/]", True: "[green]ok[/]", False: "[red]failed[/]"}[job.last_ok]
        failing |= job.last_ok is False
        table.add_row(
            job.name,
            str(job.every),
            _fmt(job.last_started),
            outcome,
            _fmt(job.next_run),
            str(job.failures_24h),
            job.last_message[:80],
        )
    console.print(table)
    print_queue(engine, now)
    if failing:
        raise typer.Exit(1)


def _fmt(when: datetime | None) -> str:
    return "—" if when is None else when.strftime("%Y-%m-%d %H:%M:%S UTC")


def register(app: typer.Typer) -> None:
    """Add ``serve`` and ``status`` to the top-level app."""
    app.command()(serve)
    app.command()(status)
