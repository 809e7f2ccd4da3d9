"""`arena replay`: run a replay cohort to its end, with a progress bar.

`arena replay CONFIG.toml` launches a cohort from a config and runs it; `arena replay --cohort ID`
runs (or resumes, after a crash or a pause) a cohort already launched. Exit code 1 when a round
failed for every agent, so a broken key or a dead endpoint is never reported as success.
``launch_cohort``, ``run_to_end``, ``finish_run`` and ``exit_if_failed`` are the steps of a run,
which ``arena demo`` (``arena.commands.demo``) takes too.
"""

from __future__ import annotations

import asyncio
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy import Engine

from agents.registry import AgentConfigError
from arena.cohorts.config import CohortConfig, ConfigError, load_config
from arena.cohorts.launch import launch
from arena.commands.cohort_views import print_launched
from arena.commands.leaderboard_table import EachReplicateOption, WideOption, print_leaderboard
from arena.commands.options import (
    DatabaseOption,
    fail,
    launching,
    process_settings,
    unknown_cohort,
)
from arena.commands.terminal import echo, one_line, plain_console, plural
from arena.core.clock import SystemClock
from arena.db.engine import database_gone
from arena.engine.replay.lease import CohortBusy
from arena.engine.replay.runner import CohortNotRunnable, ReplayResult, replay_cohort
from arena.engine.rounds.report import RoundReport
from arena.engine.rounds.run import run_round
from arena.engine.runtime.cohort import CohortNotFound
from arena.engine.runtime.sources import open_source
from arena.reports.errors import agent_errors
from arena.reports.overview import cohort_mode
from arena.scoring.rules.health import FailedAgent, failed_agents
from markets.types import MarketSource

console = plain_console()
AllowFailures = Annotated[
    bool,
    typer.Option(
        "--allow-agent-failures",
        help="Exit 0 even when an agent failed (fewer than half its answers valid); it is still reported.",
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``arena replay`` to ``app``."""
    app.command("replay")(replay_command)


def replay_command(
    config_paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[CONFIG.toml...]", help="Config of a new replay cohort (several with --queue)."
        ),
    ] = None,
    cohort_id: Annotated[
        str | None, typer.Option("--cohort", help="Run or resume this launched cohort instead.")
    ] = None,
    from_report: Annotated[
        Path | None,
        typer.Option(
            "--from-report",
            metavar="DIR",
            help="Relaunch the cohort of a report folder (its config.toml; the dataset hash is checked).",
        ),
    ] = None,
    queue: Annotated[
        bool,
        typer.Option(
            "--queue", help="Launch and queue the cohorts for `arena worker` processes (PostgreSQL)."
        ),
    ] = False,
    by_workers: Annotated[
        bool,
        typer.Option(
            "--by-workers",
            help="Plan each round as one unit per agent for `arena worker` processes (PostgreSQL).",
        ),
    ] = False,
    allow_agent_failures: AllowFailures = False,
    wide: WideOption = False,
    each_replicate: EachReplicateOption = False,
    database_url: DatabaseOption = None,
) -> None:
    """Replay a cohort through its dataset in simulated time, then print the leaderboard."""
    configs = config_paths or []
    if [bool(configs), cohort_id is not None, from_report is not None].count(True) != 1:
        fail("give one of CONFIG.toml (a new cohort), --cohort ID (an existing one) or --from-report DIR")
    if len(configs) > 1 and not queue:
        fail("several configs replay only with --queue (for `arena worker` processes); give one")
    if from_report is not None and queue:
        fail("--from-report replays here; queue its config.toml with --queue instead")
    with launching(database_url) as engine:
        if queue:
            from arena.commands.worker import queue_replays

            queue_replays(engine, configs, cohort_id, launch=launch_cohort)
            return
        source = None
        if configs or from_report is not None:
            try:
                config = load_config(configs[0]) if configs else _report_config(from_report)
                source = open_source(config, engine)  # read once: the cohort launches and replays from it
                cohort_id = launch_cohort(engine, config, source)
            except ConfigError as exc:
                fail(str(exc))
    assert cohort_id is not None
    result = run_to_end(engine, cohort_id, source=source, by_workers=by_workers)
    del source  # replayed: scoring and the leaderboard need not keep the dataset in memory
    failed = finish_run(engine, result, wide=wide, each_replicate=each_replicate)
    exit_if_failed(failed, cohort_id, allow=allow_agent_failures)


def _report_config(folder: Path | None) -> CohortConfig:
    """The config of the report in ``folder``, if it relaunches the report's cohort."""
    from arena.reports.reproduce import config_from_report

    assert folder is not None
    return config_from_report(folder)


def launch_cohort(engine: Engine, config: Any, source: MarketSource | None = None) -> str:
    """Launch a cohort of ``config`` on ``source`` (default: the market source it names)."""
    if source is None:
        source = open_source(config, engine)
    clock = SystemClock()
    launched = launch(engine, config, source=source, environ=os.environ, clock=clock)
    print_launched(console, launched, now=clock.now())
    return launched.cohort_id


def run_to_end(
    engine: Engine, cohort_id: str, *, source: MarketSource | None = None, by_workers: bool = False
) -> ReplayResult:
    """Replay the cohort to its end under a progress bar.

    ``source``: the dataset it was just launched on, so a command that launches and replays reads
    and validates it once (default: loaded from its config)."""
    mode = cohort_mode(engine, cohort_id)  # the runtime parses the frozen config, once
    if mode is None:
        fail(unknown_cohort(cohort_id))
    if mode != "replay":
        fail(f"cohort {cohort_id} is a live cohort; `arena serve` runs it")
    from arena.engine.live.jobs import RoundUnfinished
    from arena.scheduling.planner import plan_round
    from arena.workers.queue import QueueNeedsPostgres, require_postgres
    from arena.workers.roster import live_workers

    try:
        if by_workers:
            require_postgres(engine.url)
            if not live_workers(engine, SystemClock().now()):
                console.print(
                    "[yellow]No live `arena worker` yet: each round waits for workers (at most the "
                    "cohort's round_budget + call_timeout). Start some with: arena worker[/]"
                )
        with _ReplayProgress() as progress:
            result = asyncio.run(
                replay_cohort(
                    engine,
                    cohort_id,
                    source,
                    environ=os.environ,
                    wall_clock=SystemClock(),
                    progress=progress,
                    round_runner=plan_round if by_workers else run_round,
                    synchronous_commit=process_settings().replay_synchronous_commit,
                )
            )
            if result.stopped is None:
                progress.finish()
            return result
    except (ConfigError, CohortNotFound, CohortNotRunnable, AgentConfigError, CohortBusy) as exc:
        fail(str(exc))
    except (QueueNeedsPostgres, RoundUnfinished) as exc:  # --by-workers: no PostgreSQL, or no workers
        fail(str(exc))


AGENT_FAILURES_EXIT = 3


def finish_run(
    engine: Engine, result: ReplayResult, *, wide: bool, each_replicate: bool = False
) -> list[FailedAgent]:
    """Say how the run ended and print the leaderboard.

    Exits 1 when every agent failed in some round, or when the database file vanished during the
    run (nothing of it was kept). Returns the agents that failed over the cohort (see
    ``exit_if_failed``)."""
    gone = database_gone(engine)
    if gone is not None:
        fail(gone, code=1)
    if result.stopped:
        console.print(f"Stopped: cohort {result.cohort_id} is {result.stopped}.")
    elif result.completed:
        console.print(f"Cohort {result.cohort_id} completed: every round run and every position settled.")
    else:
        console.print(
            f"[yellow]The data ended with {result.open_positions} positions still open "
            f"({len(result.stale)} of them stale):[/]"
        )
        for stale in result.stale[:20]:
            console.print(f"  {escape(stale.describe(result.end or stale.waiting_since))}")
        console.print("Resolve them with `arena markets resolve`, see `arena markets pending`.")
    failed = _print_leaderboard(engine, result.cohort_id, wide=wide, each_replicate=each_replicate)
    errors = len(agent_errors(engine, result.cohort_id))
    if errors:
        console.print(
            f"{plural(errors, 'agent error')} (decisions that failed or were refused): "
            f"`arena cohort errors {escape(result.cohort_id)}` lists each with its message"
        )
    if result.failed_rounds:
        rounds = ", ".join(str(r.round_index) for r in result.failed_rounds)
        fail(f"every agent failed in round(s) {rounds}; see `arena cohort errors {result.cohort_id}`", code=1)
    return failed


def exit_if_failed(failed: list[FailedAgent], cohort_id: str, *, allow: bool) -> None:
    """The last lines of a run: one warning per failed agent, then exit 3 unless allowed."""
    for agent in failed:
        echo(f"warning: {one_line(agent.describe())}; see `arena cohort errors {cohort_id}`", err=True)
    if failed and not allow:
        raise typer.Exit(AGENT_FAILURES_EXIT)


def _print_leaderboard(
    engine: Engine, cohort_id: str, *, wide: bool, each_replicate: bool
) -> list[FailedAgent]:
    """Print the cohort's leaderboard; returns its failed agents (``arena.scoring.rules.health``)."""
    from arena.scoring import Settings as ScoreSettings
    from arena.scoring import leaderboard_document, load_frames
    from arena.scoring.load.database import cohort_scoring

    frames = load_frames(engine, [cohort_id])
    chosen = cohort_scoring(engine, [cohort_id])  # the cohort's seed and reading, as everywhere
    settings = ScoreSettings(seed=chosen.seed, implied=chosen.implied)
    document = leaderboard_document(frames, settings, cohorts=[cohort_id], as_of=None)
    print_leaderboard(console, document, wide=wide, each_replicate=each_replicate)
    return failed_agents(frames.decisions)


class _ReplayProgress:
    """A rich progress bar over the replay's steps: simulated date, round, agent errors so far."""

    def __init__(self) -> None:
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self._task = self._bar.add_task("replay", total=None)
        self._round = "—"
        self._errors = 0

    def __enter__(self) -> _ReplayProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def start(self, total_steps: int) -> None:
        """Shown from the first step on, so a run refused before it starts prints only its error."""
        self._bar.update(self._task, total=total_steps)
        self._bar.start()

    def finish(self) -> None:
        """The run reached its end (every round run and position settled, or the data's end)
        before the last step of the grid: the bar ends full, at the steps it took (N/N)."""
        task = self._bar.tasks[0]
        self._bar.update(self._task, total=task.completed, refresh=True)

    def step(self, at: datetime, report: RoundReport | None) -> None:
        if report is not None:
            self._round = str(report.round_index)
            self._errors += len(report.errors)
        text = f"{at:%Y-%m-%d}  round {self._round}  agent errors {self._errors}"
        self._bar.update(self._task, advance=1, description=text)
