"""The CLI's one way to the terminal: text is printed as written, and no control code acts.

Lines and table cells hold text written by others: market questions, agent, cohort and model
names, provider error bodies. Three things keep that text data:

- ``rich.markup.escape`` (at the call sites) keeps a ``[bold]`` in them from being read as markup;
- the console made here never replaces ``:fire:`` with an emoji (rich's default);
- every control character but newline and tab (ESC sequences, OSC title and clipboard writes, a
  CR that overwrites the line, C1 controls, bidirectional overrides) is shown as its escape
  (``\\x1b``, ``\\u202e``; ``arena.core.controls``), never sent. The console spells them out both
  where rich turns a string into text (so widths are measured on what is shown) and where it
  writes its output, after layout but before its own colour codes: whatever renderable a command
  prints, raw text from others cannot reach the terminal.

Every command prints through ``plain_console``, ``echo`` or ``fail`` (``arena.commands.options``),
and logs through ``log_to_terminal``; ``tests/commands/test_terminal_seam.py`` checks that no
command writes to the terminal any other way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import typer
from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from arena.core.controls import visible_controls


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


def echo(message: str, *, err: bool = False) -> None:
    """``message`` on stdout (stderr with ``err``), its control characters spelt out."""
    typer.echo(visible_controls(message), err=err)


def one_line(message: str) -> str:
    """``message`` as one terminal line: control characters spelt out, newlines as ``\\n``."""
    return visible_controls(message).replace("\n", "\\n").replace("\t", " ")


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
