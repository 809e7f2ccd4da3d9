"""One module per command group; ``arena.cli`` mounts them. Each exposes a ``typer.Typer`` named ``app``
or plain functions registered by ``arena.cli``."""
