"""The CLI's rich console and tables: text printed as written, and nothing ever cut.

Lines and table cells hold text written by others: market questions, agent and cohort names,
model errors. ``rich.markup.escape`` keeps a ``[bold]`` in them from being read as markup, but
rich would still replace ``:fire:`` with an emoji (its default), so every command prints through
a console made here.

Rich fits a table to the terminal by cutting cells to ``…`` (and dropping columns that get no
room): at 80 columns or in a pipe that cut ids, names and hashes, the very text a reader copies.
``print_table`` never lets it: wrapping columns fold instead of cutting, and a table whose
unbreakable columns (``no_wrap``: ids, hashes, numbers) do not fit is printed at the width they
need, leaving the terminal to wrap the lines. ``print_json`` is the machine-readable form every
listing command offers with ``--json`` (keys in docs/cli.md).
"""

from __future__ import annotations

import json
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

FOLD_WIDTH = 10  # the narrowest a wrapping column is made before the table is printed wider instead


def plain_console(**options: Any) -> Console:
    """A rich ``Console`` (``options`` as rich takes them) that never replaces emoji codes."""
    return Console(emoji=False, **options)


def listing_table(title: str | None = None) -> Table:
    """A table with light rules and little padding: the CLI's listings, sized for 80 columns."""
    return Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` with every cell whole (see the module docstring)."""
    for column in table.columns:
        if not column.no_wrap and column.overflow == "ellipsis":
            column.overflow = "fold"
    needed = least_width(console, table)
    if needed <= console.width:
        console.print(table)
    else:
        plain_console(file=console.file, width=needed, no_color=console.no_color).print(table)


def fits(console: Console, table: Table) -> bool:
    """Whether ``print_table`` prints ``table`` within the console's width."""
    return least_width(console, table) <= console.width


def least_width(console: Console, table: Table) -> int:
    """The narrowest width at which no cell of ``table`` is cut: every ``no_wrap`` column at its
    full width, every other column at most ``FOLD_WIDTH`` wide (it folds below that)."""
    wide = console.options.update_width(1_000_000)
    total = table._extra_width  # the rules between columns
    for column in table.columns:
        measured = table._measure_column(console, wide, column)  # padding included
        padding = table._get_padding_width(column._index)
        total += measured.maximum if column.no_wrap else min(measured.maximum, FOLD_WIDTH + padding)
    return total


def plural(count: int, word: str) -> str:
    """``1 agent``, ``3 agents``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def print_json(value: Any) -> None:
    """``value`` as indented JSON on stdout (not through rich, so nothing is wrapped or styled)."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))
