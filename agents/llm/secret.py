"""An API key that cannot leak by accident.

The key is only ever revealed to build the ``Authorization`` header. Everything that comes back
from the network (error bodies, exception text, even model content that echoes a header) passes
through ``scrub`` before it can reach a Decision, a log line or the database. A provider may echo
a key cut or reformatted (without its ``sk-`` prefix, a few characters masked), so ``scrub``
replaces every run of ``MIN_SECRET_CHARS`` or more characters taken from a secret, not only the
whole secret. The other secrets of a request (header and query values read from the environment)
are scrubbed the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

REDACTED = "[REDACTED]"
# Shorter "keys" are placeholders (local servers accept any, e.g. "ollama"); scrubbing them
# would corrupt ordinary words in model answers. It is also the shortest echoed piece scrubbed.
MIN_SECRET_CHARS = 8


class Secret:
    """Holds a key (and the request's other secret values); its repr and str never show them."""

    __slots__ = ("_others", "_pieces", "_value")

    def __init__(self, value: str | None, others: Iterable[str] = ()) -> None:
        self._value = value or None
        self._others = tuple(o for o in others if o)
        secrets = [s for s in (self._value, *self._others) if s and len(s) >= MIN_SECRET_CHARS]
        # Every MIN_SECRET_CHARS-long piece of every secret: a text holding any of them holds part of one.
        self._pieces = frozenset(
            s[i : i + MIN_SECRET_CHARS] for s in secrets for i in range(len(s) - MIN_SECRET_CHARS + 1)
        )

    def __repr__(self) -> str:
        return "Secret(***)" if self._value else "Secret(None)"

    __str__ = __repr__

    @property
    def present(self) -> bool:
        return self._value is not None

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._value}"} if self._value else {}

    def scrub(self, text: str) -> str:
        """``text`` with every run of ``MIN_SECRET_CHARS`` or more characters of a secret replaced
        by one marker (each piece is found with ``str.find``: linear in the text, run in C)."""
        if not self._pieces:
            return text
        covered: list[tuple[int, int]] = []
        for piece in self._pieces:
            at = text.find(piece)
            while at != -1:
                covered.append((at, at + MIN_SECRET_CHARS))
                at = text.find(piece, at + 1)
        if not covered:
            return text
        parts, position = [], 0
        for start, end in _merged(covered):
            parts += [text[position:start], REDACTED]
            position = end
        parts.append(text[position:])
        return "".join(parts)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans joined, in order."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
