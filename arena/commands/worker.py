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
from typing import Annotated

import typer
from rich.markup import escape
from sqlalchemy import Engine

from arena.cohorts.config import CohortConfig, ConfigError, load_config
from arena.commands.options import (
    DatabaseOption,
    database_url_or_default,
    fail,
    process_settings,
    schema_ready,
    unknown_cohort,
)
from arena.commands.terminal import listing_table, log_to_terminal, plain_console, print_table
from arena.core.clock import SystemClock
from arena.db.engine import make_engine, session_scope
from arena.db.models import WorkerRow, WorkUnitRow
from arena.reports.overview import cohort_mode
from arena.workers import queue, roster
from arena.workers.queue import QueueNeedsPostgres, fenced_session_url, require_postgres
from arena.workers.settings import DEFAULT_LEASE_TTL, DEFAULT_POLL, DEFAULT_SLOTS, WorkerSettings
from markets.types import MarketSource

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
    engine: Engine,
    configs: list[Path],
    cohort_id: str | None,
    *,
    launch: Callable[[Engine, CohortConfig, MarketSource], str],
) -> None:
    """``arena replay --queue``: launch each config (or take ``cohort_id``) and queue it; every
    config is checked completely (settings, agents, keys, dataset) before anything is launched,
    so a problem in the fifth launches and queues nothing."""
    try:
        require_postgres(engine.url)
    except QueueNeedsPostgres as exc:
        fail(str(exc))
    parsed = [_checked(engine, path) for path in configs]
    if cohort_id is not None and (mode := cohort_mode(engine, cohort_id)) != "replay":
        fail(
            f"cohort {cohort_id} is a live cohort; `arena serve` runs it"
            if mode
            else unknown_cohort(cohort_id)
        )
    cohorts = [launch(engine, config, source) for config, source in parsed] if parsed else [str(cohort_id)]
    now = SystemClock().now()
    for cohort in cohorts:
        unit = queue.enqueue_replay(engine, cohort, now)
        console.print(f"queued cohort [bold]{cohort}[/] as unit {unit}")
    console.print(
        f"{len(cohorts)} replay(s) queued. Start workers on any machine with this database: "
        "[bold]arena worker[/] (add --until-idle to exit when done); watch with "
        "[bold]arena cohort list[/] and [bold]arena status[/]."
    )


def _checked(engine: Engine, path: Path) -> tuple[CohortConfig, MarketSource]:
    """The config at ``path`` and its market source, checked as ``launch`` would check them; a
    problem is one line naming the file (exit 2)."""
    from arena.cohorts.launch import check_launch  # every bettor kind: only when launching
    from arena.engine.runtime.sources import open_source

    try:
        config = load_config(path)
        source = open_source(config, engine)
        check_launch(config, source=source, environ=os.environ, clock=SystemClock())
    except ConfigError as exc:
        message = str(exc)
        fail(message if message.startswith(str(path)) else f"{path}: {message}")
    return config, source


def _queue_state(engine: Engine) -> tuple[list[WorkerRow], list[WorkUnitRow], list[queue.RoundUnits]]:
    with session_scope(engine, write=False) as session:
        return roster.workers(session), queue.units(session), queue.decision_rounds(session)


def print_queue(engine: Engine, now: datetime) -> None:
    """Workers and units, for ``arena status``; nothing when no unit was ever queued. Ids stay
    whole; each error is printed in full under its table."""
    workers, units, rounds = _queue_state(engine)
    if workers:
        table = listing_table("Workers")
        table.add_column("worker")
        for column in ("state", "heartbeat", "unit", "units done"):
            table.add_column(column, no_wrap=True)
        for row in workers:
            table.add_row(
                escape(row.name),
                roster.state_of(row, now),
                _ago(row.heartbeat_at, now),
                str(row.unit_id or "—"),
                str(row.units_done),
            )
        print_table(console, table)
    if units:
        table = listing_table("Units (lease times UTC)")
        for column in ("unit", "kind", "cohort / venue", "state", "tries", "lag", "lease until"):
            table.add_column(column, no_wrap=True)
        for unit in units:
            lease = "—" if unit.lease_expires_at is None else unit.lease_expires_at.strftime("%H:%M:%S")
            table.add_row(
                str(unit.id),
                unit.kind,
                escape(unit.dedup_key),
                unit.state,
                str(unit.attempts),
                _lag(unit, now),
                lease,
            )
        print_table(console, table)
        for unit in units:
            if unit.error:
                console.print(f"unit {unit.id}: {escape(unit.error)}", overflow="fold")
    if rounds:
        _print_decision_rounds(rounds, now)


def _print_decision_rounds(rounds: list[queue.RoundUnits], now: datetime) -> None:
    """One line per planned round: its decision units by state, retries, the oldest wait."""
    table = listing_table("Decision units (one per agent of a round planned for workers)")
    for column in ("cohort", "round", "queued", "running", "done", "failed", "retried", "lag"):
        table.add_column(column, no_wrap=True)
    for r in rounds:
        counts = [str(r.by_state.get(state, 0)) for state in _STATES]
        table.add_row(escape(r.cohort_id), str(r.round_index), *counts, str(r.retried), _wait(r, now))
    print_table(console, table)
    for r in rounds:
        for error in r.errors[:1]:
            console.print(f"{escape(r.cohort_id)} round {r.round_index}: {escape(error)}", overflow="fold")


_STATES = (queue.QUEUED, queue.RUNNING, queue.DONE, queue.FAILED)


def _ago(when: datetime, now: datetime) -> str:
    return f"{(now - when).total_seconds():.0f} s ago"


def _wait(r: queue.RoundUnits, now: datetime) -> str:
    return "—" if r.oldest_queued is None else f"{max((now - r.oldest_queued).total_seconds(), 0):.0f} s"


def _lag_seconds(unit: WorkUnitRow, now: datetime) -> float | None:
    """How long the unit waited for a worker: so far while queued, else until a worker took it."""
    taken = now if unit.state == queue.QUEUED else unit.started_at
    return None if taken is None else max((taken - unit.available_at).total_seconds(), 0)


def _lag(unit: WorkUnitRow, now: datetime) -> str:
    seconds = _lag_seconds(unit, now)
    return "—" if seconds is None else f"{seconds:.0f} s"


def register(app: typer.Typer) -> None:
    app.command("worker")(worker_command)
