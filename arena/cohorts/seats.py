"""The seats of a cohort: one per configured agent, or N for an agent with ``replicates = N``.

A replicated agent ``name`` sits as ``name#1`` … ``name#N``: independent copies with the same
settings, so the spread between them measures how much the agent's results owe to chance (a
model's sampling, a seeded bot's draws). ``#`` is not allowed in configured names, so a seat
named ``x#k`` is always replicate k of ``x``. An LLM replicate k is sent the sampling seed
``base + k − 1`` (``seed`` in the request body, which OpenAI-compatible providers honour where
they can, and the mock provider always), ``base`` being the agent's own ``seed`` setting or else
the cohort's seed; every other kind keeps its settings (``random`` draws per seat name already;
a deterministic bot's replicates are identical).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.cohorts.config import CohortConfig

REPLICATE_MARK = "#"
SEEDED_KINDS = frozenset({"llm"})  # kinds whose settings take a sampling ``seed``


@dataclass(frozen=True, slots=True)
class Seat:
    """One agent row of a cohort: its name, kind and frozen settings, and whose replicate it is."""

    name: str
    kind: str
    settings: dict[str, Any]
    agent: str  # the configured agent's name
    replicate: int | None = None  # 1..N for a replicated agent


def seats(config: CohortConfig) -> list[Seat]:
    """Every seat of ``config``, in config order (replicates of one agent together)."""
    found = []
    for agent in config.agents:
        settings = agent.settings
        if agent.replicates == 1:
            found.append(Seat(agent.name, agent.kind, settings, agent.name))
            continue
        base = settings.get("seed", config.seed)
        for k in range(1, agent.replicates + 1):
            own = {**settings, "seed": base + k - 1} if agent.kind in SEEDED_KINDS else settings
            found.append(Seat(replicate_name(agent.name, k), agent.kind, own, agent.name, k))
    return found


def replicate_name(agent: str, k: int) -> str:
    return f"{agent}{REPLICATE_MARK}{k}"


def replicated_agent(seat: str) -> str | None:
    """The configured agent a seat name is a replicate of (``kelly#2`` → ``kelly``), else None."""
    agent, mark, k = seat.rpartition(REPLICATE_MARK)
    return agent if mark and agent and k.isdigit() else None
