"""`arena cohort ...`: launch a cohort from a TOML config, list, show, pause, resume, cancel, reconcile.

Also home of the small helpers the engine's other commands share (database, errors).
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from sqlmodel import Session, select

from arena.cohorts.config import ConfigError, load_config
from arena.cohorts.lifecycle import TRANSITIONS, CohortStateError, change_status
from arena.commands.options import DatabaseOption, fail, launching, open_engine, open_reader
from arena.commands.terminal import plain_console
from arena.core.clock import SystemClock
from arena.core.config_types import format_duration
from arena.db.models import AgentRow
from arena.engine.store.ledger_store import reconcile
from arena.reports.overview import CohortOverview, cohort_overview, list_cohorts

app = typer.Typer(no_args_is_help=True, help="Cohorts: launch, list, show, pause, resume, cancel, reconcile.")
console = plain_console()


@app.command("launch")
def launch_command(
    config_path: Annotated[Path, typer.Argument(metavar="CONFIG.toml", help="Cohort config file.")],
    cohort_id: Annotated[
        str | None, typer.Option("--id", help="Cohort id (default: name + launch time).")
    ] = None,
    database_url: DatabaseOption = None,
) -> None:
    """Check a config completely (agents, keys, dataset), freeze it and create the cohort.

    Replay cohorts are then run with `arena replay --cohort ID`; live cohorts by `arena serve`.
    """
    # Here, not at the top: the launch path (every bettor kind, the market sources with polars)
    # costs more start-up than `arena cohort list` and `show` need in all.
    from arena.cohorts.launch import launch
    from arena.engine.runtime.sources import open_source

    with launching(database_url) as engine:
        try:
            config = load_config(config_path)
            launched = launch(
                engine,
                config,
                source=open_source(config, engine),
                environ=os.environ,
                clock=SystemClock(),
                cohort_id=cohort_id,
            )
        except ConfigError as exc:
            fail(str(exc))
    verb = "Launched" if launched.created else "Already launched:"
    console.print(f"{verb} cohort [bold]{launched.cohort_id}[/] ({config.mode}, {len(config.agents)} agents)")
    console.print(f"config sha256 {launched.config.config_hash()}")
    if launched.work is not None:
        console.print(f"implies {launched.work.describe()}")
    if launched.excluded:
        console.print(
            f"leakage guard: {launched.excluded} markets closing by an agent's knowledge cutoff are excluded"
        )
    for warning in launched.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    nxt = f"arena replay --cohort {launched.cohort_id}" if config.mode == "replay" else "arena serve"
    console.print(f"Run it with: [bold]{nxt}[/]")


@app.command("list")
def list_command(database_url: DatabaseOption = None) -> None:
    """Every cohort, newest first."""
    rows = list_cohorts(open_reader(database_url))
    if not rows:
        console.print("No cohorts yet: `arena demo`, or `arena cohort launch CONFIG.toml`.")
        return
    queued = any(r.unit for r in rows)  # the Queue column only once `arena replay --queue` was used
    table = Table(title="Cohorts")
    for header in ("Id", "Name", "Mode", "Status", "Agents", "Rounds", "Created (UTC)"):
        table.add_column(header)
    if queued:
        table.add_column("Queue")
    for r in rows:
        cells = [
            escape(r.id),
            escape(r.name),
            r.mode,
            r.status,
            str(r.agents),
            f"{r.rounds_done}/{r.rounds_planned}",
            f"{r.created_at:%Y-%m-%d %H:%M}",
        ]
        table.add_row(*cells, *([escape(r.unit or "—")] if queued else []))
    console.print(table)


@app.command("show")
def show_command(
    cohort_id: Annotated[str, typer.Argument(metavar="ID")], database_url: DatabaseOption = None
) -> None:
    """A cohort's config, agents (value, P/L, bets, errors), rounds and stale positions."""
    try:
        overview = cohort_overview(open_reader(database_url), cohort_id)
    except ConfigError as exc:  # frozen by an older version with values now out of range
        fail(f"cohort {cohort_id!r} cannot be shown: {exc}", code=1)
    if overview is None:
        fail(f"no cohort with id {cohort_id!r} (see `arena cohort list`)")
    render_overview(overview)


@app.command("reconcile")
def reconcile_command(
    cohort_id: Annotated[str, typer.Argument(metavar="ID")], database_url: DatabaseOption = None
) -> None:
    """Check every agent's cached positions and stored marks against a replay of its fill log."""
    engine = open_reader(database_url)
    overview = cohort_overview(engine, cohort_id)
    if overview is None:
        fail(f"no cohort with id {cohort_id!r} (see `arena cohort list`)")
    with Session(engine) as session:
        ids = list(session.exec(select(AgentRow.id).where(AgentRow.cohort_id == cohort_id)).all())
        problems = reconcile(session, overview.config.rules.to_rules(), [i for i in ids if i is not None])
    for problem in problems:
        console.print(escape(problem))
    if problems:
        fail(f"{len(problems)} disagreements between the caches and the fill log", code=1)
    console.print(f"cohort {cohort_id}: {len(ids)} ledgers agree with their fill logs to the micro-dollar")


def render_overview(o: CohortOverview) -> None:
    c = o.config
    console.print(f"[bold]{o.id}[/]  {escape(c.name)}  status {o.status}  {c.mode}  seed {c.seed}")
    source = c.dataset if c.mode == "replay" else c.venue
    console.print(
        f"start {c.start:%Y-%m-%d %H:%M} UTC, every {format_duration(c.schedule.every)}, "
        f"rounds {o.rounds_done}/{o.rounds_planned or 'until the data ends'}, "
        f"source {source}, fills {c.fills.model}, prices {c.price_visibility.mode}"
    )
    console.print(f"config sha256 {o.config_hash}" + (f"   code {o.git_commit}" if o.git_commit else ""))
    if o.excluded:
        console.print(
            f"leakage guard: {o.excluded} markets excluded (closing by an agent's knowledge cutoff)"
        )
    table = Table(title="Agents")
    for header in (
        "Agent",
        "Kind",
        "Model",
        "Value",
        "P/L",
        "Return %",
        "Cash",
        "Open",
        "Bets",
        "Errors",
        "Missed",
        "Cost $",
    ):
        table.add_column(header, justify="left" if header in ("Agent", "Kind", "Model") else "right")
    for a in o.agents:
        table.add_row(
            a.name,
            a.kind,
            escape(a.model or "—"),
            _money(a.value),
            _money(a.pnl, signed=True),
            _pct(a.return_pct),
            _money(a.cash),
            str(a.open_positions),
            str(a.bets),
            str(a.errors),
            str(a.missed),
            f"{a.cost:.4f}",
        )
    console.print(table)
    if o.empty_rounds:
        console.print(f"[yellow]{len(o.empty_rounds)} rounds asked nobody:[/]")
        for index, why in o.empty_rounds[-20:]:
            console.print(f"  round {index}: {escape(why)}")
    if o.stale:
        console.print(f"[yellow]{len(o.stale)} positions are waiting for a resolution:[/]")
        for line in o.stale[:20]:
            console.print(f"  {escape(line)}")


def _money(value: Decimal | None, *, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{'+' if signed and value > 0 else ''}{value:,.2f}"


def _pct(value: Decimal | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def _transition(action: str) -> Any:
    def command(
        cohort_id: Annotated[str, typer.Argument(metavar="ID")], database_url: DatabaseOption = None
    ) -> None:
        try:
            status = change_status(open_engine(database_url), cohort_id, action, at=SystemClock().now())
        except CohortStateError as exc:
            fail(str(exc))
        console.print(f"cohort {cohort_id} is now {status}")

    allowed, target = TRANSITIONS[action]
    command.__doc__ = f"Set a {' or '.join(allowed)} cohort to {target}."
    return command


for _action in TRANSITIONS:
    app.command(_action)(_transition(_action))
