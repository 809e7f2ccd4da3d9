"""`arena cohort ...`: launch a cohort from a TOML config, list, show, list its errors, export its
config, pause, resume, cancel, reconcile.

Also home of the small helpers the engine's other commands share (database, errors).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from sqlmodel import Session, select

from arena.cohorts.config import ConfigError, load_config
from arena.cohorts.export import config_toml
from arena.cohorts.lifecycle import TRANSITIONS, CohortStateError, change_status
from arena.commands import cohort_views as views
from arena.commands.options import DatabaseOption, fail, launching, open_engine, open_reader, unknown_cohort
from arena.commands.terminal import echo, plain_console, print_json
from arena.core.clock import SystemClock
from arena.db.models import AgentRow, CohortRow
from arena.engine.store.ledger_store import reconcile
from arena.reports.errors import agent_errors
from arena.reports.overview import cohort_mode, cohort_overview, list_cohorts

app = typer.Typer(
    no_args_is_help=True,
    help="Cohorts: launch, list, show, errors, export, pause, resume, cancel, reconcile.",
)
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
    views.print_launched(console, launched, now=SystemClock().now())
    nxt = f"arena replay --cohort {launched.cohort_id}" if config.mode == "replay" else "arena serve"
    console.print(f"Run it with: [bold]{nxt}[/]")


JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (keys: docs/cli.md).")]


@app.command("list")
def list_command(as_json: JsonOption = False, database_url: DatabaseOption = None) -> None:
    """Every cohort, newest first."""
    rows = list_cohorts(open_reader(database_url))
    if as_json:
        print_json(views.list_json(rows))
    elif not rows:
        console.print("No cohorts yet: `arena demo`, or `arena cohort launch CONFIG.toml`.")
    else:
        views.print_list(console, rows)


@app.command("show")
def show_command(
    cohort_id: Annotated[str, typer.Argument(metavar="ID")],
    as_json: JsonOption = False,
    database_url: DatabaseOption = None,
) -> None:
    """A cohort's config, agents (value, P/L, bets, errors), rounds and stale positions."""
    try:
        overview = cohort_overview(open_reader(database_url), cohort_id)
    except ConfigError as exc:  # frozen by an older version with values now out of range
        fail(f"cohort {cohort_id!r} cannot be shown: {exc}")
    if overview is None:
        fail(unknown_cohort(cohort_id))
    if as_json:
        print_json(views.show_json(overview))
    else:
        views.print_show(console, overview)


@app.command("errors")
def errors_command(
    cohort_id: Annotated[str, typer.Argument(metavar="ID")],
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's errors.")] = None,
    as_json: JsonOption = False,
    database_url: DatabaseOption = None,
) -> None:
    """Every failed or refused decision: round, agent, kind, markets and the full message."""
    engine = open_reader(database_url)
    if cohort_mode(engine, cohort_id) is None:
        fail(unknown_cohort(cohort_id))
    errors = agent_errors(engine, cohort_id, agent)
    if as_json:
        print_json(views.errors_json(errors))
    else:
        views.print_errors(console, cohort_id, errors)


@app.command("export")
def export_command(
    cohort_id: Annotated[str, typer.Argument(metavar="ID")], database_url: DatabaseOption = None
) -> None:
    """Print the cohort's frozen config as TOML: `arena replay` of it reruns the same cohort."""
    from arena.reports.redact import Redactor

    engine = open_reader(database_url)
    with Session(engine) as session:
        row = session.get(CohortRow, cohort_id)
    if row is None:
        fail(unknown_cohort(cohort_id))
    document = Redactor.from_environ(os.environ).document(row.config_json)
    header = [f"cohort {cohort_id}, exported by `arena cohort export`", f"config sha256 {row.config_hash}"]
    echo(config_toml(document, header=header), nl=False)
    if document != row.config_json:
        echo(
            "warning: values that look like secrets are written as [REDACTED]: this file does not "
            "relaunch the same config",
            err=True,
        )


@app.command("reconcile")
def reconcile_command(
    cohort_id: Annotated[str, typer.Argument(metavar="ID")], database_url: DatabaseOption = None
) -> None:
    """Check every agent's cached positions and stored marks against a replay of its fill log."""
    engine = open_reader(database_url)
    overview = cohort_overview(engine, cohort_id)
    if overview is None:
        fail(unknown_cohort(cohort_id))
    with Session(engine) as session:
        ids = list(session.exec(select(AgentRow.id).where(AgentRow.cohort_id == cohort_id)).all())
        problems = reconcile(session, overview.config.rules.to_rules(), [i for i in ids if i is not None])
    for problem in problems:
        console.print(escape(problem))
    if problems:
        fail(f"{len(problems)} disagreements between the caches and the fill log", code=1)
    console.print(f"cohort {cohort_id}: {len(ids)} ledgers agree with their fill logs to the micro-dollar")


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
