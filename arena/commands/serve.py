"""``arena serve`` (the live scheduler) and ``arena status`` (its jobs and their health)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from datetime import datetime
from types import FrameType
from typing import Annotated, Any

import typer
from rich.markup import escape

from arena.commands.options import FAILED, DatabaseOption, fail, open_engine, process_settings
from arena.commands.terminal import listing_table, plain_console, print_json, print_table
from arena.commands.worker import print_queue, queue_json
from arena.core.clock import SystemClock
from arena.core.config_types import format_duration
from arena.db import leases
from arena.db.engine import make_engine
from arena.scheduling.status import JobStatus, job_statuses

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

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
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


def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (keys: docs/cli.md).")] = False,
    database_url: DatabaseOption = None,
) -> None:
    """Show the scheduler's leader and, per job, last and next run, outcome and recent failures."""
    settings = process_settings()
    engine = open_engine(database_url)
    now = SystemClock().now()
    held = leases.holder(engine)
    running = held is not None and held.expires_at >= now
    jobs = job_statuses(engine, now, settings)
    if as_json:
        scheduler = {
            "running": running,
            "owner": held.owner if running and held else None,
            "lease_until": _iso(held.expires_at) if running and held else None,
        }
        print_json({"scheduler": scheduler, "jobs": [_job_json(j) for j in jobs], **queue_json(engine, now)})
    else:
        if running and held:
            console.print(
                f"Scheduler: [green]running[/] as {escape(held.owner)} (lease until {_fmt(held.expires_at)})"
            )
        else:
            console.print("Scheduler: [yellow]not running[/] (start it with [bold]arena serve[/])")
        _print_jobs(jobs)
        print_queue(engine, now)
    if any(job.last_ok is False for job in jobs):
        raise typer.Exit(FAILED)


def _print_jobs(jobs: list[JobStatus]) -> None:
    """One row per job; each job's last message whole, on lines of its own under the table."""
    table = listing_table("Jobs (times UTC)")
    for column in ("job", "every", "last run", "outcome", "next run", "fails 24h"):
        table.add_column(column, no_wrap=True, justify="right" if column == "fails 24h" else "left")
    for job in jobs:
        outcome = {None: "[dim]—[/]", True: "[green]ok[/]", False: "[red]failed[/]"}[job.last_ok]
        table.add_row(
            job.name,
            format_duration(job.every),
            _fmt(job.last_started),
            outcome,
            _fmt(job.next_run),
            str(job.failures_24h),
        )
    print_table(console, table)
    for job in jobs:
        if job.last_message:
            console.print(f"{job.name}: {escape(job.last_message)}", overflow="fold")


def _job_json(job: JobStatus) -> dict[str, Any]:
    return {
        "job": job.name,
        "every": format_duration(job.every),
        "last_run": _iso(job.last_started),
        "ok": job.last_ok,
        "next_run": _iso(job.next_run),
        "failures_24h": job.failures_24h,
        "message": job.last_message,
    }


def _fmt(when: datetime | None) -> str:
    return "—" if when is None else when.strftime("%Y-%m-%d %H:%M:%S")


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def register(app: typer.Typer) -> None:
    """Add ``serve`` and ``status`` to the top-level app."""
    app.command()(serve)
    app.command()(status)
