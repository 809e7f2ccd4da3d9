"""Research tools as an agent sees them: a catalogue of specs and one async call.

The arena builds a ``Toolbox`` for each agent and round (``arena/tools/``) that answers strictly
as of the round's time, so an agent can look things up without ever touching the database.
A call the tool cannot answer (unknown market, bad arguments) raises ``ToolError`` with a
message meant for the model: the bettor sends it back as the call's result and goes on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

STORED_CHARS = 16_000
"""Arguments and results longer than this are stored as their sha256 and size, not their text."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as offered to a model: ``parameters`` is the JSON schema of its arguments object."""

    name: str
    description: str
    parameters: Mapping[str, Any]


class ToolError(Exception):
    """A call the tool cannot answer; the one-line message is what the model is told."""


class Toolbox(Protocol):
    """The tools of one agent in one round."""

    def specs(self) -> Sequence[ToolSpec]: ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """The tool's answer as text (JSON), or ``ToolError`` saying what was wrong."""
        ...


@dataclass(frozen=True, slots=True)
class StoredText:
    """Text as it is kept with a decision: in full up to ``STORED_CHARS``, else only its digest."""

    text: str | None
    sha256: str
    chars: int

    @classmethod
    def of(cls, text: str) -> StoredText:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return cls(text if len(text) <= STORED_CHARS else None, digest, len(text))


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call of a decision: what was asked, what came back, and how long it took.

    ``step`` is the model request (1-based) that asked for it; ``is_error`` marks answers that
    explain why the call could not be made (unknown tool, bad arguments, budget spent, timeout).
    """

    step: int
    call_id: str
    name: str
    arguments: StoredText
    result: StoredText
    is_error: bool
    latency_s: float
