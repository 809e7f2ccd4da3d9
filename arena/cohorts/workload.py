"""What a cohort implies before it runs: its rounds, marks and agent decisions, within limits.

A config can ask for a mark every second over a year of replayed data, or a round every hour
of a dataset that begins in year 1: each valid on its own, and together millions of rows that
would only fail (out of memory, out of disk) hours into the run. ``implied_work`` counts them
from the frozen config and the data's end, and ``check_work`` refuses, at launch, a cohort past
``MAX_ROUNDS``, ``MAX_MARKS`` or ``MAX_DECISIONS`` (docs/limits-and-safety.md "Limits").

The counts are those of the replay's own loop (``arena.engine.replay.runner``): rounds every
``schedule.every`` from the start up to the data's end (or ``schedule.rounds``), marks every
``marks.every`` up to the first instant at or after the data's end. A live cohort's marks are
counted while its decisions stand (``every × rounds``); it keeps marking open positions after.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from arena.cohorts.config import MAX_ROUNDS, CohortConfig, ConfigError
from arena.core.config_types import format_duration

MAX_MARKS = 100_000
MAX_DECISIONS = 5_000_000


@dataclass(frozen=True)
class Work:
    """A cohort's implied work: rounds, portfolio marks (per agent), agent decisions in all and
    those asked of an LLM agent (each one provider call at least)."""

    rounds: int
    marks: int
    decisions: int
    llm_calls: int

    def describe(self) -> str:
        return (
            f"{self.rounds:,} rounds, {self.marks:,} marks, {self.decisions:,} agent decisions "
            f"({self.llm_calls:,} of them LLM calls)"
        )


def implied_work(config: CohortConfig, start: datetime, data_end: datetime | None) -> Work:
    """The work of ``config`` from ``start`` (its resolved start) over data ending at
    ``data_end`` (replay)."""
    every, rounds = config.schedule.every, config.schedule.rounds
    if config.mode == "replay":
        span = max(timedelta(0), (data_end or start) - start)
        fits = span // every + 1
        rounds = fits if rounds is None else min(rounds, fits)
    else:
        rounds = rounds or 0
        span = every * rounds
    marks = -(-span // config.marks.every) + 1
    llm_agents = sum(agent.kind == "llm" for agent in config.agents)
    return Work(rounds, marks, rounds * len(config.agents), rounds * llm_agents)


def check_work(config: CohortConfig, work: Work) -> None:
    """ConfigError (one line naming what to change) when ``work`` is past a limit."""
    if work.rounds > MAX_ROUNDS:
        raise ConfigError(
            f"schedule: rounds every {format_duration(config.schedule.every)} until the data ends are "
            f"{work.rounds:,} rounds; at most {MAX_ROUNDS:,} "
            "(set schedule.rounds, a longer every or a later start)"
        )
    if work.marks > MAX_MARKS:
        raise ConfigError(
            f"marks.every: a mark every {format_duration(config.marks.every)} is {work.marks:,} marks "
            f"over the cohort; at most {MAX_MARKS:,} per cohort (mark less often)"
        )
    if work.decisions > MAX_DECISIONS:
        raise ConfigError(
            f"agents: {len(config.agents):,} agents × {work.rounds:,} rounds are {work.decisions:,} "
            f"decisions; at most {MAX_DECISIONS:,} per cohort"
        )
