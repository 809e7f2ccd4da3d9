"""The LLM bettor: prompt, call, strict parse, and one corrective retry.

``decide`` never raises for anything the provider or the model does: a failed call or an
answer that stays invalid becomes a Decision with ``error``/``error_kind`` set, no actions,
and the raw text kept (up to ``max_raw_kept_chars``; past it, its size and sha256). An
invalid answer is never repaired into a decision; the model is
shown what was wrong and asked again (``invalid_retries`` times), which is the only way an
answer can change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

import httpx

from agents.llm.client import CHAT_PATH, ChatClient, Meter
from agents.llm.context import OutputContext
from agents.llm.endpoint import Endpoint
from agents.llm.errors import ChatError, ErrorKind
from agents.llm.output import DECISION_SCHEMA, InvalidOutput, ParsedOutput, parse_decision
from agents.llm.prompt import RenderedPrompt, load_templates, render_prompt
from agents.llm.secret import Secret
from agents.llm.settings import LLMSettings
from agents.llm.tool_loop import ToolSession
from agents.llm.wire import ChatMessage, Completion
from agents.types import AgentView, Decision, Usage
from markets.bounded import kept_text

log = logging.getLogger(__name__)

_ECHO_CHARS = 8_000  # how much of a rejected answer is sent back to the model with the reasons


@dataclass(frozen=True, slots=True)
class _Failure:
    """Why one answer was unusable, and what to tell the model before asking again."""

    kind: ErrorKind
    message: str
    answer: str

    @property
    def about_the_answer(self) -> bool:
        """Failures of the model's answer (worth asking again), not of the transport."""
        return self.kind in (ErrorKind.EMPTY_CONTENT, ErrorKind.LENGTH, ErrorKind.INVALID_OUTPUT)

    def follow_up(self) -> list[ChatMessage]:
        if self.kind is ErrorKind.EMPTY_CONTENT:
            return [ChatMessage.of("user", "Your answer was empty. Reply with the JSON object only.")]
        if self.kind is ErrorKind.LENGTH:
            request = (
                "Your answer was cut off at the token limit before it was complete. "
                "Reply again, more briefly, with the JSON object only."
            )
        else:
            request = (
                f"Your answer was rejected: {self.message}. Nothing was executed. Reply again with one "
                "corrected JSON object only, following the answer format exactly."
            )
        echoed = self.answer if len(self.answer) <= _ECHO_CHARS else self.answer[:_ECHO_CHARS] + " …[cut]"
        return [ChatMessage.of("assistant", echoed), ChatMessage.of("user", request)]


class LLMBettor:
    """A bettor backed by any OpenAI-compatible chat-completions endpoint.

    The key is held in a ``Secret`` (never in settings, repr or any Decision field); the
    ``httpx.AsyncClient`` is injected so the arena owns connection pooling and shutdown.
    """

    uses_peers = False

    def __init__(
        self,
        name: str,
        settings: LLMSettings,
        client: httpx.AsyncClient,
        api_key: str | None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """``environ`` resolves the settings' ``env:`` references (headers, query parameters)."""
        self.name = name
        self.settings = settings
        endpoint = Endpoint.resolve(settings.base_url, settings.extra_headers, environ or {}, path=CHAT_PATH)
        self._chat = ChatClient(name, settings, client, Secret(api_key, endpoint.secrets), endpoint)
        load_templates(settings.prompt_version)  # a broken template fails at start-up, not in a round

    def __repr__(self) -> str:
        return f"LLMBettor(name={self.name!r}, model={self.settings.model!r})"

    async def decide(self, view: AgentView) -> Decision:
        started = time.perf_counter()
        prompt = render_prompt(view, self.settings)
        context = OutputContext.for_view(view, prompt.markets)
        messages = prompt.messages()
        meter = Meter(recorder=view.on_request)
        tools = self._tool_session(view)
        result, raw = await self._converse(messages, context, meter, tools)
        usage = Usage(
            prompt_tokens=meter.prompt_tokens,
            completion_tokens=meter.completion_tokens,
            cost_usd=meter.cost_usd,
            latency_s=time.perf_counter() - started,
            attempts=meter.requests,
            requests=tuple(meter.log),
        )
        kept = None if raw is None else kept_text(raw, self.settings.max_raw_kept_chars)
        decision = _decision(result, kept, prompt, messages, usage)
        return replace(decision, tool_calls=tuple(tools.calls)) if tools else decision

    def _tool_session(self, view: AgentView) -> ToolSession | None:
        """Tools for this decision, when the agent uses them and the arena offers any."""
        if not self.settings.tools.enabled or view.toolbox is None:
            return None
        return ToolSession(self.name, view.toolbox, self.settings.tools)

    async def _converse(
        self, messages: list[ChatMessage], context: OutputContext, meter: Meter, tools: ToolSession | None
    ) -> tuple[ParsedOutput | _Failure, str | None]:
        """Ask, judge, and ask again with the reasons while invalid retries remain."""
        retries = self.settings.invalid_retries
        attempt = 0
        while True:
            result, raw = await self._attempt(messages, context, meter, tools)
            if isinstance(result, ParsedOutput):
                return result, raw
            log.warning(
                "agent %s: answer %d/%d unusable: %s: %s",
                self.name,
                attempt + 1,
                retries + 1,
                result.kind.value,
                result.message,
            )
            if not result.about_the_answer or attempt >= retries:
                return result, raw
            messages.extend(result.follow_up())
            attempt += 1

    async def _attempt(
        self, messages: list[ChatMessage], context: OutputContext, meter: Meter, tools: ToolSession | None
    ) -> tuple[ParsedOutput | _Failure, str | None]:
        """One answer (after any transport retries and tool calls), judged; the raw text or error
        body with it. A reply that calls tools is answered and the model asked again."""
        specs = tools.specs if tools else ()
        while True:
            try:
                completion = await self._chat.complete(messages, DECISION_SCHEMA, meter, specs)
            except ChatError as error:
                return _Failure(error.kind, error.message, ""), error.body
            if tools is None or not completion.tool_calls:
                return self._judge(completion, context), completion.content
            stop = await tools.answer(completion, messages)
            if stop is not None:
                return _Failure(ErrorKind.TOOL_LOOP, stop, completion.content), completion.content

    def _judge(self, completion: Completion, context: OutputContext) -> ParsedOutput | _Failure:
        content = completion.content
        if not content.strip():
            reason = f"the model returned no content (finish_reason={completion.finish_reason})"
            return _Failure(ErrorKind.EMPTY_CONTENT, reason, content)
        if completion.finish_reason == "length":
            reason = f"the answer was cut off at max_tokens={self.settings.max_tokens} (finish_reason=length)"
            return _Failure(ErrorKind.LENGTH, reason, content)
        try:
            return parse_decision(content, context)
        except InvalidOutput as invalid:
            return _Failure(ErrorKind.INVALID_OUTPUT, str(invalid), content)


def _decision(
    result: ParsedOutput | _Failure,
    raw: str | None,
    prompt: RenderedPrompt,
    messages: list[ChatMessage],
    usage: Usage,
) -> Decision:
    transcript = "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)
    audit = Decision(
        usage=usage,
        raw_prompt=transcript,
        raw_response=raw,
        prompt_hash=prompt.sha256,
        prompt_version=prompt.version,
    )
    if isinstance(result, ParsedOutput):
        return replace(
            audit, actions=result.actions, probabilities=result.probabilities, reasoning=result.reasoning
        )
    return replace(audit, error=result.message, error_kind=result.kind.value)
