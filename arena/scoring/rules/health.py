"""Which agents failed: so few valid answers that their scores say nothing about their skill.

An LLM whose endpoint was dead for a whole run holds every round; it then ties with ``hold`` on
every money metric and would rank as a "flat" contender. An agent with decisions of which fewer
than ``MIN_VALID_SHARE`` were valid answers (no error: unparseable output, timeouts, HTTP errors,
rejected actions all count against it) is *failed*: the leaderboards say so and do not rank it
among working agents, and ``arena demo``/``arena replay`` end with a warning and a non-zero exit.
Decisions where the agent was not asked at all (``NOT_ASKED``: held for its dollar budget) are
not answers, so they count neither way.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

MIN_VALID_SHARE = 0.5
NOT_ASKED = ("over_budget",)  # error kinds of decisions the arena made without asking the agent


def answered(decisions: pl.DataFrame) -> pl.DataFrame:
    """The decisions the agent was asked for (those held for its budget left out)."""
    return decisions.filter(~pl.col("error_kind").is_in(NOT_ASKED) | pl.col("error_kind").is_null())


@dataclass(frozen=True)
class FailedAgent:
    agent: str
    decisions: int
    valid: int
    top_error: str  # the most common error kind (ties: alphabetical)
    top_error_count: int

    def describe(self) -> str:
        return (
            f"agent {self.agent} failed: {self.valid} of {self.decisions} answers valid "
            f"(below {MIN_VALID_SHARE:.0%}); most common error: {self.top_error} ×{self.top_error_count}"
        )


def failed_agents(decisions: pl.DataFrame) -> list[FailedAgent]:
    """The failed agents of a ``decisions`` frame (columns ``agent``, ``error_kind``), by name."""
    decisions = answered(decisions)
    counts = decisions.group_by("agent").agg(
        decisions=pl.len(), valid=pl.col("error_kind").is_null().sum().cast(pl.Int64)
    )
    failed = counts.filter(pl.col("valid") < pl.col("decisions") * MIN_VALID_SHARE).sort("agent")
    errors = (
        decisions.drop_nulls("error_kind")
        .group_by("agent", "error_kind")
        .len()
        .sort(["agent", "len", "error_kind"], descending=[False, True, False])
        .unique("agent", keep="first", maintain_order=True)
    )
    top = {agent: (kind, n) for agent, kind, n in errors.iter_rows()}
    return [
        FailedAgent(agent, decisions, valid, *top[agent]) for agent, decisions, valid in failed.iter_rows()
    ]


def health_metrics(decisions: pl.DataFrame, agents: pl.Series) -> pl.DataFrame:
    """Per agent of ``agents``: ``failed`` (bool), for the leaderboards (an agent that never
    decided has not failed: it has no answers at all, and other columns say so)."""
    failed = {f.agent for f in failed_agents(decisions)}
    names = agents.unique(maintain_order=True)
    return pl.DataFrame(
        {"agent": names, "failed": [name in failed for name in names]},
        schema={"agent": pl.String, "failed": pl.Boolean},
    )
