"""The ``arena`` command line: mounts the commands of ``arena.commands``, each imported when it runs.

Every command is named here with its one-line help; its module is imported only when the command
is invoked, so ``arena --help`` imports no command and ``arena leaderboard`` only scoring
(docs/design/cli-start-up.md has the figures; ``tests/commands/test_cli_imports.py`` checks that
these lines match the commands' own help, and what each command imports).
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

# Typer's rich help prints each option's type, flags included (``--json <bool>``), which reads as
# if a flag took a value. A flag takes none: its type is left out, before any command is built.
_TYPED = TyperOption.display_type_rich


def _type_unless_flag(option: TyperOption, ctx: Any) -> str | None:
    return None if option.is_flag else _TYPED(option, ctx)


TyperOption.display_type_rich = _type_unless_flag  # type: ignore[method-assign,assignment]

# One BLAS thread unless the user says otherwise, set before any command imports numpy: the
# bootstrap's matrix products are too small for a second thread to pay (docs/design/one-blas-thread.md).
# Inherited by the dashboard's and workers' processes.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@dataclass(frozen=True)
class Entry:
    """Where a command lives. A group module exposes a ``typer.Typer`` named ``app``; any other
    module has ``register(app)``, which adds its commands (``serve``: serve and status)."""

    module: str
    help: str
    group: bool = False


COMMANDS: dict[str, Entry] = {
    "replay": Entry(
        "arena.commands.run",
        "Replay a cohort through its dataset in simulated time, then print the leaderboard.",
    ),
    "demo": Entry(
        "arena.commands.demo",
        "The baselines (and an LLM when OPENROUTER_API_KEY or --llm-base-url is given) on the bundled "
        "dataset, offline: launch, replay to the end, print the leaderboard, write the report.",
    ),
    "leaderboard": Entry(
        "arena.commands.leaderboard",
        "Rank the agents of the latest cohort, of those named, or of every cohort pooled with --all "
        "(P/L summed, return on capital allocated).",
    ),
    "compare": Entry(
        "arena.commands.compare",
        "Compare cohorts run on the same markets: each agent of every cohort against the same agent "
        "of the first, with paired intervals over their common markets and a verdict.",
    ),
    "report": Entry(
        "arena.commands.report",
        "Write report.html (opens offline), report.md, tables/ (Parquet + CSV) and manifest.json.",
    ),
    "dashboard": Entry(
        "arena.commands.dashboard",
        "Open the dashboard (leaderboard, cohorts, agents, markets, calibration) in your browser.",
    ),
    "serve": Entry(
        "arena.commands.serve",
        "Run the live scheduler: market sync, due rounds, marks, settlement, completion. Ctrl-C stops.",
    ),
    "status": Entry(
        "arena.commands.serve",
        "Show the scheduler's leader and, per job, last and next run, outcome and recent failures.",
    ),
    "data": Entry("arena.commands.data", "Replay datasets: import, inspect.", group=True),
    "markets": Entry(
        "arena.commands.markets", "Live markets: sync, record, pending resolutions.", group=True
    ),
    "db": Entry(
        "arena.commands.db", "Database: upgrade the schema, show its revision, prune old rows.", group=True
    ),
    "cohort": Entry(
        "arena.commands.cohort",
        "Cohorts: launch, list, show, errors, export, pause, resume, cancel, reconcile.",
        group=True,
    ),
    "corpus": Entry("arena.commands.corpus", "Corpora for research tools: import, info, list.", group=True),
    "worker": Entry(
        "arena.commands.worker",
        "Run queued units (replays; agents' decisions; `arena serve`'s marks, settlement, sync).",
    ),
}


def load(name: str) -> TyperCommand | TyperGroup:
    """The real command ``name``, importing its module now."""
    entry = COMMANDS[name]
    module = _import_for_good(entry.module)
    holder = typer.Typer(add_completion=False, rich_markup_mode="rich")
    if entry.group:
        holder.add_typer(module.app, name=name, help=entry.help)
    else:
        module.register(holder)
    command = typer.main.get_group(holder).commands[name]
    if not isinstance(command, TyperCommand | TyperGroup):
        raise TypeError(f"typer built {type(command).__name__} for arena {name}")
    return command


def _import_for_good(name: str) -> ModuleType:
    """Import a command's module, then freeze what it made (``gc.freeze``); a module already
    imported (the CLI invoked in-process) is returned as is."""
    if name in sys.modules:
        return sys.modules[name]
    # The imports are ~180,000 objects that live as long as the process: with the collector paused
    # and then frozen, no full collection walks them again (a fifth of a cold command's CPU).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(name)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


class LazyGroup(TyperGroup):
    """Lists every command by its line in ``COMMANDS`` (enough for ``--help`` and suggestions) and
    loads only the command being invoked."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands.update({name: TyperCommand(name, help=entry.help) for name, entry in COMMANDS.items()})

    # ``ctx`` is typer's context; typed ``Any`` as typer's own base class (vendored click) is private.
    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a database deleted under it, or a full disk, ends it with one line and
        exit status 1, whichever command it was (``arena.commands.failures``)."""
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if type(exc).__module__.startswith(("typer", "click")):  # exits, usage errors, --help
                raise
            from arena.commands.failures import explained

            message = explained(exc)
            if message is None:
                raise
            from arena.commands.options import fail

            fail(message, code=1)

    def resolve_command(
        self, ctx: Any, args: list[str]
    ) -> tuple[str | None, TyperCommand | TyperGroup | None, list[str]]:
        name, _, rest = super().resolve_command(ctx, args)  # every command it knows is in COMMANDS
        return name, (load(name) if name in COMMANDS else None), rest


app = typer.Typer(
    name="arena",
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    help="Bettor Arena: paper-trading cohorts of LLM bettors on real prediction markets.",
)


@app.callback()
def main() -> None:
    """Bettor Arena: paper-trading cohorts of LLM bettors on real prediction markets."""
    # Warnings a command logs (a failed round quotes the provider's error) go through the
    # terminal seam too, never raw to stderr.
    from arena.commands.terminal import log_to_terminal

    log_to_terminal(logging.WARNING, "%(message)s")


if __name__ == "__main__":
    app()
