"""The CLI's rich console: text is printed as written, and no ``:name:`` code becomes an emoji.

Lines and table cells hold text written by others: market questions, agent and cohort names,
model errors. ``rich.markup.escape`` keeps a ``[bold]`` in them from being read as markup, but
rich would still replace ``:fire:`` with an emoji (its default), so every command prints through
a console made here.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console


def plain_console(**options: Any) -> Console:
    """A rich ``Console`` (``options`` as rich takes them) that never replaces emoji codes."""
    return Console(emoji=False, **options)
