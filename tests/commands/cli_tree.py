"""The ``arena`` command tree, walked once for the tests that check every command."""

from __future__ import annotations

from typing import Any

import typer.main

from arena.cli import COMMANDS, app, load


def _children(group: Any, prefix: str) -> list[tuple[str, Any]]:
    """A group's commands by name; at the root each one loaded for real (``arena --help`` itself
    only lists their names: see ``arena.cli``)."""
    if prefix == "":
        return [(name, load(name)) for name in sorted(COMMANDS)]
    return sorted(group.commands.items())


def leaves(group: Any = None, prefix: str = "") -> list[tuple[str, Any]]:
    """(full name, command) of every leaf command, e.g. ``("data info", <command>)``; typer's
    command classes are its own click's, so the walk goes by their ``commands`` attribute."""
    group = typer.main.get_command(app) if group is None else group
    if hasattr(group, "commands"):
        return [
            leaf
            for name, command in _children(group, prefix)
            for leaf in leaves(command, f"{prefix} {name}".strip())
        ]
    return [(prefix, group)]


def groups(group: Any = None, prefix: str = "") -> list[str]:
    """Full names of every command group, the root ``""`` first."""
    group = typer.main.get_command(app) if group is None else group
    if not hasattr(group, "commands"):
        return []
    below = (groups(command, f"{prefix} {sub}".strip()) for sub, command in _children(group, prefix))
    return [prefix, *(name for names in below for name in names)]
