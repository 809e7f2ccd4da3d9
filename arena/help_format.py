"""``--help`` without a ``<bool>`` tag beside every flag.

Typer 0.29's rich help prints each option's type in a column, flags included: ``--fresh <bool>``,
``--help <bool>``, which reads as if the flag took a value. A flag takes none, so its type is left
out; options that take a value keep theirs (``--model <str>``). Installed once, by ``arena.cli``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typer.core import TyperOption

_TYPED: Callable[[TyperOption, Any], str | None] = TyperOption.display_type_rich


def _type_unless_flag(option: TyperOption, ctx: Any) -> str | None:
    """The type typer would show, or nothing for a flag (``--json``, ``--report/--no-report``)."""
    return None if option.is_flag else _TYPED(option, ctx)


def install() -> None:
    """Make every ``arena`` help screen show flags bare."""
    TyperOption.display_type_rich = _type_unless_flag  # type: ignore[method-assign,assignment]
