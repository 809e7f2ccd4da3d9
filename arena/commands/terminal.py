"""The CLI's one way to the terminal: text printed as written, no control code acting, nothing cut.

Lines and table cells hold text written by others: market questions, agent, cohort and model
names, provider error bodies. Three things keep that text data:

- ``rich.markup.escape`` (at the call sites) keeps a ``[bold]`` in them from being read as markup;
- the console made here never replaces ``:fire:`` with an emoji (rich's default);
- every control character but newline and tab (ESC sequences, OSC title and clipboard writes, a
  CR that overwrites the line, C1 controls, bidirectional overrides) is shown as its escape
  (``\\x1b``, ``\\u202e``; ``arena.core.controls``), never sent. The console spells them out both
  where rich turns a string into text (so widths are measured on what is shown) and where it
  writes its output, after layout but before its own colour codes.

Rich fits a table to the terminal by cutting cells to ``…``: at 80 columns or in a pipe that cut
ids, names and hashes, the very text a reader copies. ``print_table`` never lets it: wrapping
columns fold instead of cutting, and a table whose unbreakable columns (``no_wrap``: ids, hashes,
numbers) do not fit is printed at the width they need. ``print_json`` is the machine-readable form
every listing command offers with ``--json`` (keys in docs/cli.md).

Every command prints through ``plain_console``, ``print_table``, ``print_json``, ``echo`` or
``fail`` (``arena.commands.options``), and logs through ``log_to_terminal``;
``tests/commands/test_terminal_seam.py`` checks that no command writes to the terminal any other
way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from arena.core.controls import BIDI_CONTROLS, visible_controls

FOLD_WIDTH = 10  # the narrowest a wrapping column is made before the table is printed wider instead
# JSON escapes C0 controls itself; DEL, C1 and bidirectional controls become \uXXXX escapes too.
_JSON_INERT = str.maketrans(
    {chr(c): f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0), *map(ord, BIDI_CONTROLS))}
)


class _InertConsole(Console):
    """A rich ``Console`` that shows control characters in printed text instead of sending them."""

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(visible_controls(text), **options)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Rich's own cursor and screen controls travel as control segments, and its colours are
        # added after this, by each segment's style: only text is spelt out.
        shown = (s if s.control else s._replace(text=visible_controls(s.text)) for s in buffer)
        return super()._render_buffer(shown)


def plain_console(**options: Any) -> Console:
    """A rich ``Console`` (``options`` as rich takes them) that never replaces emoji codes and
    never sends a control character from the text it prints."""
    return _InertConsole(emoji=False, **options)


def echo(message: str, *, err: bool = False, nl: bool = True) -> None:
    """``message`` on stdout (stderr with ``err``; a newline after it with ``nl``), its control
    characters spelt out."""
    typer.echo(visible_controls(message), err=err, nl=nl)


def one_line(message: str) -> str:
    """``message`` as one terminal line: control characters spelt out, newlines as ``\\n``."""
    return visible_controls(message).replace("\n", "\\n").replace("\t", " ")


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
    """``value`` as indented JSON on stdout (not through rich, so nothing is wrapped or styled);
    every control character escaped, so the JSON stays valid and inert."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False).translate(_JSON_INERT))


class _InertFormatter(logging.Formatter):
    """A log line (and its traceback) with control characters spelt out."""

    def format(self, record: logging.LogRecord) -> str:
        return visible_controls(super().format(record))


def log_to_terminal(level: int, fmt: str) -> None:
    """Log records at ``level`` and above to stderr in ``fmt``, control characters spelt out
    (``logging.basicConfig``: nothing changes when the process logs elsewhere already). Replaces
    the handler an earlier call installed: the CLI installs one for every command (warnings as
    bare messages, as Python's own last-resort handler shows them), a command may ask for more."""
    root = logging.getLogger()
    for installed in [h for h in root.handlers if isinstance(h.formatter, _InertFormatter)]:
        root.removeHandler(installed)
    handler = logging.StreamHandler()
    handler.setFormatter(_InertFormatter(fmt))
    logging.basicConfig(level=level, handlers=[handler])
