"""Every command that touches the database takes ``--database-url`` (the README promises it)."""

from __future__ import annotations

from typing import Any

import typer.main

from arena.cli import app

# Commands that only read and write replay datasets on disk, never the arena database.
NO_DATABASE = {"data import-forecastbench", "data info", "data rehash", "corpus build-market-texts"}


def _leaves(group: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(full name, command) of every leaf command; typer's command classes are its own click's."""
    if hasattr(group, "commands"):
        return [
            leaf
            for name, command in sorted(group.commands.items())
            for leaf in _leaves(command, f"{prefix} {name}".strip())
        ]
    return [(prefix, group)]


def test_every_database_command_takes_database_url() -> None:
    leaves = _leaves(typer.main.get_command(app))
    missing = [
        name
        for name, command in leaves
        if name not in NO_DATABASE
        and not any("--database-url" in getattr(p, "opts", ()) for p in command.params)
    ]
    assert len(leaves) > 15, [name for name, _ in leaves]  # the walk really reached the subcommands
    assert missing == []
