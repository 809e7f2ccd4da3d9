"""Asking agents for decisions: concurrently, each call under a timeout, the round under a budget.

A slow or broken agent can never stall a round or take others down with it: its failure becomes
a ``Decision`` with ``error`` set (the agent holds), recorded like any other answer. Agents run
concurrently so none fills at a later price than another (they all use the round's snapshot).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from agents.types import AgentView, Bettor, Decision


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    bettor: Bettor
    view: AgentView


async def ask_all(
    calls: Sequence[Call], *, concurrency: int, call_timeout: timedelta, budget: timedelta
) -> dict[str, Decision]:
    """Each agent's decision by name; failures, timeouts and budget overruns become error decisions."""
    if not calls:
        return {}
    gate = asyncio.Semaphore(concurrency)
    tasks = {asyncio.create_task(_ask(call, gate, call_timeout)): call.name for call in calls}
    done, pending = await asyncio.wait(tasks, timeout=max(budget.total_seconds(), 0))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    answers = {tasks[t]: t.result() for t in done}
    for task in pending:
        answers[tasks[task]] = Decision(
            error=f"the round budget of {budget} ran out before the agent answered", error_kind="timeout"
        )
    return answers


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
