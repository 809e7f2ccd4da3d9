"""Asking agents for decisions: concurrently, each call under a timeout, the round under a budget.

A slow or broken agent can never stall a round or take others down with it: its failure becomes
a ``Decision`` with ``error`` set (the agent holds), recorded like any other answer. Agents run
concurrently so none fills at a later price than another (they all use the round's snapshot).
Each answer carries the time it came in (``Answer.at``, read from the caller's ``now``): agents
of one round answer at different times, and each decision stores its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from agents.types import AgentView, Bettor, Decision


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    bettor: Bettor
    view: AgentView


@dataclass(frozen=True, slots=True)
class Answer:
    """An agent's decision and when it came in (when it failed or was given up on, for an error)."""

    decision: Decision
    at: datetime


async def ask_all(
    calls: Sequence[Call],
    *,
    concurrency: int,
    call_timeout: timedelta,
    budget: timedelta,
    now: Callable[[], datetime],
) -> dict[str, Answer]:
    """Each agent's answer by name; failures, timeouts and budget overruns become error decisions.
    ``now`` stamps each answer as it comes in (a replay passes its round's simulated time)."""
    if not calls:
        return {}
    gate = asyncio.Semaphore(concurrency)
    tasks = {asyncio.create_task(_answer(call, gate, call_timeout, now)): call.name for call in calls}
    done, pending = await asyncio.wait(tasks, timeout=max(budget.total_seconds(), 0))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    answers = {tasks[t]: t.result() for t in done}
    given_up = now()
    for task in pending:
        late = Decision(
            error=f"the round budget of {budget} ran out before the agent answered", error_kind="timeout"
        )
        answers[tasks[task]] = Answer(late, given_up)
    return answers


async def _answer(
    call: Call, gate: asyncio.Semaphore, timeout: timedelta, now: Callable[[], datetime]
) -> Answer:
    decision = await _ask(call, gate, timeout)
    return Answer(decision, now())


async def _ask(call: Call, gate: asyncio.Semaphore, timeout: timedelta) -> Decision:
    async with gate:
        try:
            decision = await asyncio.wait_for(call.bettor.decide(call.view), timeout.total_seconds())
        except TimeoutError:
            return Decision(error=f"no answer within the call timeout of {timeout}", error_kind="timeout")
        except Exception as exc:  # an agent's bug must not end the round for the others
            return Decision(error=f"{type(exc).__name__}: {exc}", error_kind="exception")
    if not isinstance(decision, Decision):
        return Decision(
            error=f"decide() returned {type(decision).__name__}, not a Decision", error_kind="exception"
        )
    return decision
