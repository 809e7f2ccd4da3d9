"""Leakage guard: keep out of a cohort every market an agent's model may already know the answer to.

An LLM trained after a market resolved can "forecast" it from memory. For each agent with a
``knowledge_cutoff`` the guard removes, for *all* agents (they must share one snapshot), every
market resolved on or before the latest cutoff. The number removed is stored on the cohort and
shown with its results, so a reader knows how much of the dataset the guard took away.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from arena.cohorts.config import CohortConfig
from markets.types import MarketSource


def knowledge_cutoff(config: CohortConfig) -> datetime | None:
    """The end of the latest ``knowledge_cutoff`` day among the agents, or None if none declares one."""
    cutoffs = [
        _as_date(a.settings["knowledge_cutoff"]) for a in config.agents if a.settings.get("knowledge_cutoff")
    ]
    if not cutoffs:
        return None
    latest = max(cutoffs)
    return datetime(latest.year, latest.month, latest.day, tzinfo=UTC) + timedelta(days=1)


def excluded_markets(config: CohortConfig, source: MarketSource) -> frozenset[str]:
    """Markets resolved before the knowledge cutoff (on or before its day)."""
    cutoff = knowledge_cutoff(config)
    if cutoff is None:
        return frozenset()
    return frozenset(r.market_id for r in source.resolutions(cutoff) if r.resolved_at < cutoff)


def excluded_in_window(config: CohortConfig, source: MarketSource, start: datetime) -> int:
    """How many excluded markets would otherwise have been open during the cohort (resolved after
    its start): the number worth reporting, since earlier ones could never have been offered."""
    cutoff = knowledge_cutoff(config)
    if cutoff is None:
        return 0
    return sum(1 for r in source.resolutions(cutoff) if start < r.resolved_at < cutoff)


def _as_date(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))
