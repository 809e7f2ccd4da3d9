"""Every command that touches the database takes ``--database-url`` (the README promises it)."""

from __future__ import annotations

from typing import Any

from arena.cli import COMMANDS, load

# Commands that only read and write replay datasets on disk, never the arena database.
NO_DATABASE = {"data import-forecastbench", "data info", "data rehash"}


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
    # Each top-level command loaded for real (``arena --help`` only lists their names).
    leaves = [leaf for name in COMMANDS for leaf in _leaves(load(name), name)]
    missing = [
        name
        for name, command in leaves
        if name not in NO_DATABASE
        and not any("--database-url" in getattr(p, "opts", ()) for p in command.params)
    ]
    assert len(leaves) > 15, [name for name, _ in leaves]  # the walk really reached the subcommands
    assert missing == []
