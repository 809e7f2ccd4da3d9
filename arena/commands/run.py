"""Top-level commands of this group are added to the given Typer app by ``register``."""

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
