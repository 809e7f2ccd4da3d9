"""``arena worker``: run queued units (replay cohorts of a study, and the marks, settlement and
sync ``arena serve`` hands over) from a shared PostgreSQL.

Also the queue's part of ``arena status``: workers with their heartbeat and unit, and the units
with their state and how long they have waited (lag).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from sqlalchemy import Engine

from arena.cohorts.config import ConfigError, load_config
from arena.commands.options import (
    DatabaseOption,
    database_url_or_default,
    fail,
    process_settings,
    schema_ready,
)
from arena.commands.terminal import log_to_terminal, plain_console
from arena.core.clock import SystemClock
from arena.db.engine import make_engine, session_scope
from arena.db.models import WorkUnitRow
from arena.reports.overview import cohort_mode
from arena.workers import queue, roster
from arena.workers.queue import QueueNeedsPostgres, fenced_session_url, require_postgres
from arena.workers.settings import DEFAULT_LEASE_TTL, DEFAULT_POLL, DEFAULT_SLOTS, WorkerSettings

console = plain_console()


def worker_command(
    lease: Annotated[
        float, typer.Option(min=1.0, help="Seconds a silent worker keeps a unit before another takes it.")
    ] = DEFAULT_LEASE_TTL.total_seconds(),
    poll: Annotated[float, typer.Option(min=0.1, help="Seconds between looks at an empty queue.")] = (
        DEFAULT_POLL.total_seconds()
    ),
    slots: Annotated[
        int, typer.Option(min=1, help="Decision units run at once (each mostly waits on a provider).")
    ] = DEFAULT_SLOTS,
    until_idle: Annotated[
        bool, typer.Option("--until-idle", help="Exit once no unit is queued or running.")
    ] = False,
    database_url: DatabaseOption = None,
) -> None:
    """Run queued units (replays; agents' decisions; `arena serve`'s marks, settlement, sync).

    Replays come from `arena replay --queue`; decisions from rounds planned by `arena serve` or
    `arena replay --by-workers`; marks, settlement and sync from `arena serve` when a worker is
    idle. All from a shared PostgreSQL.

    Start any number, on any number of machines. Ctrl-C stops after the running unit; a second
    Ctrl-C stops at once (the unit is resumed by another worker once its lease expires)."""
    log_to_terminal(logging.WARNING, "%(asctime)s %(name)s %(message)s")
    from arena.workers.worker import Worker  # the replay engine: only for this command

    url = database_url_or_default(database_url)
    try:
        require_postgres(url)
    except QueueNeedsPostgres as exc:
        fail(str(exc))
    say = lambda line: console.print(escape(line))  # noqa: E731 -- unit lines hold cohort ids: plain text
    schema_ready(url, say)  # the server may be starting
    settings = WorkerSettings(
        lease_ttl=timedelta(seconds=lease),
        poll=timedelta(seconds=poll),
        until_idle=until_idle,
        slots=slots,
        replay_synchronous_commit=process_settings().replay_synchronous_commit,
    )
    engine = make_engine(fenced_session_url(url, settings.lease_ttl))
    worker = Worker(engine, clock=SystemClock(), settings=settings, environ=os.environ, say=say)

    def _stop(signum: int, _frame: FrameType | None) -> None:
        if worker.stopping:
            raise KeyboardInterrupt
        console.print(f"{signal.Signals(signum).name}: stopping after the running unit (again: at once)")
        worker.stop()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    worker.run()


def queue_replays(
    engine: Engine, configs: list[Path], cohort_id: str | None, *, launch: Callable[[Engine, Any], str]
) -> None:
    """``arena replay --queue``: launch each config (or take ``cohort_id``) and queue it; all
    configs are checked before anything is launched, so a typo in the fifth queues nothing."""
    try:
        require_postgres(engine.url)
        parsed = [load_config(path) for path in configs]
    except (QueueNeedsPostgres, ConfigError) as exc:
        fail(str(exc))
    if cohort_id is not None and (mode := cohort_mode(engine, cohort_id)) != "replay":
        fail(
            f"cohort {cohort_id} is a live cohort; `arena serve` runs it"
            if mode
            else f"no cohort with id {cohort_id!r}"
        )
    cohorts = [launch(engine, config) for config in parsed] if parsed else [str(cohort_id)]
    now = SystemClock().now()
    for cohort in cohorts:
        unit = queue.enqueue_replay(engine, cohort, now)
        console.print(f"queued cohort [bold]{cohort}[/] as unit {unit}")
    console.print(
        f"{len(cohorts)} replay(s) queued. Start workers on any machine with this database: "
        "[bold]arena worker[/] (add --until-idle to exit when done); watch with "
        "[bold]arena cohort list[/] and [bold]arena status[/]."
    )


def print_queue(engine: Engine, now: datetime) -> None:
    """Workers and units, for ``arena status``; nothing when no unit was ever queued."""
    with session_scope(engine, write=False) as session:
        workers, units = roster.workers(session), queue.units(session)
        rounds = queue.decision_rounds(session)
    if not workers and not units and not rounds:
        return
    table = Table(title="Workers")
    for column in ("worker", "state", "heartbeat", "unit", "units done"):
        table.add_column(column)
    for row in workers:
        age = f"{(now - row.heartbeat_at).total_seconds():.0f} s ago"
        state = roster.state_of(row, now)
        running = "—" if state in (roster.GONE, roster.STOPPED) or row.unit_id is None else str(row.unit_id)
        table.add_row(escape(row.name), state, age, running, str(row.units_done))
    console.print(table)
    table = Table(title="Units")
    for column in ("unit", "kind", "cohort / venue", "state", "attempts", "lag", "lease until", "error"):
        table.add_column(column)
    for unit in units:
        table.add_row(
            str(unit.id),
            unit.kind,
            escape(unit.dedup_key),
            unit.state,
            str(unit.attempts),
            _lag(unit, now),
            "—" if unit.lease_expires_at is None else unit.lease_expires_at.strftime("%H:%M:%S UTC"),
            escape((unit.error or "")[:60]),
        )
    if units:
        console.print(table)
    if rounds:
        _print_decision_rounds(rounds, now)


def _print_decision_rounds(rounds: list[queue.RoundUnits], now: datetime) -> None:
    """One line per planned round: its decision units by state, retries, the oldest wait."""
    table = Table(title="Decision units (one per agent of a round planned for workers)")
    for column in ("cohort", "round", "queued", "running", "done", "failed", "retried", "lag", "error"):
        table.add_column(column)
    for r in rounds:
        lag = "—" if r.oldest_queued is None else f"{max((now - r.oldest_queued).total_seconds(), 0):.0f} s"
        counts = [
            str(r.by_state.get(state, 0)) for state in (queue.QUEUED, queue.RUNNING, queue.DONE, queue.FAILED)
        ]
        first_error = escape(r.errors[0][:60]) if r.errors else ""
        table.add_row(r.cohort_id, str(r.round_index), *counts, str(r.retried), lag, first_error)
    console.print(table)


def _lag(unit: WorkUnitRow, now: datetime) -> str:
    """How long the unit waited for a worker: so far while queued, else until a worker took it."""
    taken = now if unit.state == queue.QUEUED else unit.started_at
    return "—" if taken is None else f"{max((taken - unit.available_at).total_seconds(), 0):.0f} s"


def register(app: typer.Typer) -> None:
    app.command("worker")(worker_command)
