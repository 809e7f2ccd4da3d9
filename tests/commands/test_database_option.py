"""Every command that touches the database takes ``--database-url`` (the README promises it)."""

from __future__ import annotations

from tests.commands.cli_tree import leaves

# Commands that only read and write replay datasets on disk, never the arena database.
NO_DATABASE = {"data import-forecastbench", "data info", "data rehash", "corpus build-market-texts"}


def test_every_database_command_takes_database_url() -> None:
    commands = leaves()
    missing = [
        name
        for name, command in commands
        if name not in NO_DATABASE
        and not any("--database-url" in getattr(p, "opts", ()) for p in command.params)
    ]
    assert len(commands) > 15, [name for name, _ in commands]  # the walk really reached the subcommands
    assert missing == []
