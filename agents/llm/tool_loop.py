"""The research part of a decision: answering a model's tool calls within the agent's budget.

Nothing a model asks for can crash the decision: an unknown tool, arguments that are not a JSON
object, arguments over ``MAX_ARGUMENT_CHARS``, a call past ``tools.max_calls``, a tool that
fails or outlasts ``tools.timeout_s`` -- each is answered with an error result the model can
read, and recorded like any other call. Every call counts against the budget, failed ones too,
so a model that loops on bad calls still ends; one that calls again after being told that its
budget is spent is stopped (``ErrorKind.TOOL_LOOP``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import anyio

from agents.llm.settings import ToolSettings
from agents.llm.wire import ChatMessage, Completion, ToolRequest
from agents.tools import StoredText, Toolbox, ToolCallRecord, ToolError, ToolSpec

log = logging.getLogger(__name__)

MAX_ARGUMENT_CHARS = 4_000  # every tool takes a few short arguments; more is a broken call


class ToolSession:
    """The tools of one decision: the specs offered, the calls made so far, the budget left."""

    def __init__(self, agent: str, toolbox: Toolbox, settings: ToolSettings) -> None:
        self._agent = agent
        self._toolbox = toolbox
        self._settings = settings
        self.specs: tuple[ToolSpec, ...] = tuple(toolbox.specs())
        self._names = {spec.name for spec in self.specs}
        self.calls: list[ToolCallRecord] = []
        self._steps = 0
        self._told_spent = False

    async def answer(self, completion: Completion, messages: list[ChatMessage]) -> str | None:
        """Answer every call of ``completion``, appending the assistant turn and the results to
        ``messages``; or, for a model that calls again after being told its budget is spent, the
        reason to stop (nothing appended)."""
        if self._told_spent:
            return (
                f"the model kept calling tools after its budget of {self._settings.max_calls} "
                "tool calls per decision was spent"
            )
        self._steps += 1
        messages.append(ChatMessage.calling(completion.content, completion.tool_calls))
        for request in completion.tool_calls:
            started = time.perf_counter()
            text, is_error = await self._run(request)
            self.calls.append(
                ToolCallRecord(
                    step=self._steps,
                    call_id=request.call_id,
                    name=request.name,
                    arguments=StoredText.of(request.arguments),
                    result=StoredText.of(text),
                    is_error=is_error,
                    latency_s=time.perf_counter() - started,
                )
            )
            messages.append(ChatMessage.tool_result(request.call_id, text))
        return None

    async def _run(self, request: ToolRequest) -> tuple[str, bool]:
        """The call's answer and whether it is an error."""
        if len(self.calls) >= self._settings.max_calls:
            self._told_spent = True
            return _error(
                f"tool call budget spent ({self._settings.max_calls} calls per decision); "
                "reply now with your JSON answer and no tool call"
            ), True
        if request.name not in self._names:
            known = ", ".join(sorted(self._names))
            return _error(f"unknown tool {request.name[:80]!r}; the tools are: {known}"), True
        arguments = _arguments(request.arguments)
        if isinstance(arguments, str):
            return _error(arguments), True
        try:
            with anyio.fail_after(self._settings.timeout_s):
                return await self._toolbox.call(request.name, arguments), False
        except TimeoutError:
            return _error(f"{request.name} did not answer within {self._settings.timeout_s:g} s"), True
        except ToolError as error:
            return _error(f"{request.name}: {error}"), True
        except Exception:  # a broken tool must not end the decision; it is logged in full
            log.exception("agent %s: tool %s failed", self._agent, request.name)
            return _error(f"{request.name} failed on the arena's side; try another call or answer"), True


def _arguments(text: str) -> Mapping[str, Any] | str:
    """The arguments object, or what is wrong with the text (an empty text is no arguments)."""
    if len(text) > MAX_ARGUMENT_CHARS:
        return f"arguments are {len(text):,} characters long; the limit is {MAX_ARGUMENT_CHARS:,}"
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return f"arguments must be a JSON object, got {type(value).__name__}"
    return value


def _error(message: str) -> str:
    return json.dumps({"error": message})
