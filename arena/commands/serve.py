"""``arena serve`` (the live scheduler) and ``arena status`` (its health, for people and probes)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from datetime import datetime
from types import FrameType
from typing import Annotated

import typer
from rich.markup import escape
from sqlalchemy import Engine

from arena.commands.options import (
    DatabaseOption,
    database_url_or_default,
    fail,
    open_reader,
    process_settings,
    schema_ready,
)
from arena.commands.terminal import listing_table, log_to_terminal, plain_console, print_json, print_table
from arena.commands.worker import print_queue
from arena.core.clock import SystemClock
from arena.core.config_types import format_duration
from arena.db import leases
from arena.db.engine import make_engine
from arena.scheduling.health import Health, check

console = plain_console()
log = logging.getLogger("arena.serve")
# ``arena status``'s exit codes: 0 healthy, UNHEALTHY with a problem, 2 when it cannot check.
UNHEALTHY = 1


def serve(
    poll: Annotated[float, typer.Option(help="Seconds between lease checks (leader election).")] = 5.0,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log at DEBUG: idle job runs and lease checks too.")
    ] = False,
    metrics_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Serve Prometheus metrics at http://HOST:PORT/metrics."),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="Address of the metrics endpoint (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    database_url: DatabaseOption = None,
) -> None:
    """Run the live scheduler: market sync, due rounds, marks, settlement, completion. Ctrl-C stops."""
    # The scheduler and every job's engine: only for this command, not for `arena status`.
    from arena.scheduling.jobs import lease_bounded
    from arena.scheduling.service import serve as serve_forever

    log_to_terminal(logging.WARNING, "%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("arena").setLevel(logging.DEBUG if verbose else logging.INFO)
    settings = process_settings()
    lease = settings.leader_lease.total_seconds()
    if not 0 < poll <= lease / 3:
        fail(f"--poll {poll:g}: must be positive and at most a third of ARENA_LEADER_LEASE ({lease:g} s)")
    if database_url:  # the jobs open their own engines from the settings when they run
        os.environ["ARENA_DATABASE_URL"] = database_url
    url = database_url_or_default(database_url)
    schema_ready(url, lambda line: log.warning("%s", line))  # waits while the database is unreachable
    engine = make_engine(lease_bounded(url, settings))
    if metrics_port is not None:
        _serve_metrics(engine, metrics_host, metrics_port)
    owner = leases.new_owner(f"{socket.gethostname()}:{os.getpid()}")
    stop = threading.Event()

    def _stop(signum: int, _frame: FrameType | None) -> None:
        console.print(f"[yellow]{signal.Signals(signum).name}: stopping after running jobs finish…[/]")
        stop.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    console.print(f"[bold]arena serve[/] as [cyan]{owner}[/] — Ctrl-C to stop")
    serve_forever(engine, SystemClock(), owner, stop, poll=poll, settings=settings)


def _serve_metrics(engine: Engine, host: str, port: int) -> None:
    """The Prometheus endpoint, in a thread of its own; a port already taken is a one-line error."""
    from arena.scheduling.metrics import start_metrics_server

    try:
        start_metrics_server(engine, host, port)
    except OSError as exc:
        fail(f"--metrics-port {port}: cannot listen on {host}:{port}: {exc.strerror or exc}")
    log.info("metrics at http://%s:%d/metrics", host, port)


def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as one JSON document.")] = False,
    database_url: DatabaseOption = None,
) -> None:
    """Show the scheduler's leader and, per job, last and next run, outcome and recent failures.

    Exit code: 0 healthy; 1 with any problem (each listed with its kind and reason); 2 when the
    status cannot be read (bad input, database unreachable or at another schema revision)."""
    process_settings()  # a bad ARENA_* value is a one-line error here too
    engine = open_reader(database_url)
    health = check(engine, SystemClock().now())
    if as_json:
        print_json(health.as_json())
    else:
        _print_health(health)
        print_queue(engine, health.checked_at)
        _print_problems(health)
    if not health.healthy:
        raise typer.Exit(UNHEALTHY)


def _print_health(health: Health) -> None:
    now = health.checked_at
    if health.leader is None:
        console.print("Scheduler: [yellow]not running[/] (start it with [bold]arena serve[/])")
    else:
        lead, until = escape(health.leader.owner), _fmt(health.leader.expires_at)
        console.print(f"Scheduler: [green]running[/] as {lead} (lease until {until})")
    standbys = ", ".join(
        f"{escape(s.owner)} (heartbeat {(now - s.heartbeat_at).total_seconds():.0f} s ago)"
        for s in health.standbys
    )
    console.print(f"Standbys: {standbys or 'none'}")
    table = listing_table("Jobs (times UTC)")
    for column in ("job", "every", "last run", "outcome", "next run", "fails 24h"):
        table.add_column(column, no_wrap=True, justify="right" if column == "fails 24h" else "left")
    colour = {None: "[dim]—[/]", "ok": "[green]ok[/]", "partial": "[yellow]partial[/]"}
    colour["failed"] = "[red]failed[/]"
    for job in health.jobs:
        outcome = colour[job.outcome] + (" (running)" if job.running_since else "")
        table.add_row(
            job.name,
            "—" if job.every is None else format_duration(job.every),
            _fmt(job.last_started),
            outcome,
            _fmt(job.next_run),
            str(job.failures_24h),
        )
    print_table(console, table)
    for job in health.jobs:  # each message whole, under the table
        if job.last_message:
            console.print(f"{job.name}: {escape(job.last_message)}", overflow="fold")


def _print_problems(health: Health) -> None:
    if health.healthy:
        console.print("Healthy.")
        return
    console.print(f"[red]{len(health.problems)} problem(s):[/]")
    for problem in health.problems:
        line = f"  {problem.kind} {escape(problem.subject)}: {escape(problem.reason)}"
        console.print(line, highlight=False, overflow="fold")


def _fmt(when: datetime | None) -> str:
    return "—" if when is None else when.strftime("%Y-%m-%d %H:%M:%S")


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def register(app: typer.Typer) -> None:
    """Add ``serve`` and ``status`` to the top-level app."""
    app.command()(serve)
    app.command()(status)
