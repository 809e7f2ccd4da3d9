"""An API key that cannot leak by accident.

The key is only ever revealed to build the ``Authorization`` header. Everything that comes back
from the network (error bodies, exception text, even model content that echoes a header) passes
through ``scrub`` before it can reach a Decision, a log line or the database.
"""

from __future__ import annotations

REDACTED = "[REDACTED]"
# Shorter "keys" are placeholders (local servers accept any, e.g. "ollama"); scrubbing them
# would corrupt ordinary words in model answers.
MIN_SECRET_CHARS = 8


class Secret:
    """Holds a key; its repr and str never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value or None

    def __repr__(self) -> str:
        return "Secret(***)" if self._value else "Secret(None)"

    __str__ = __repr__

    @property
    def present(self) -> bool:
        return self._value is not None

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._value}"} if self._value else {}

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the key replaced by a marker."""
        if self._value is None or len(self._value) < MIN_SECRET_CHARS:
            return text
        return text.replace(self._value, REDACTED)
