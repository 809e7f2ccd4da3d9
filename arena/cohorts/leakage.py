"""Leakage guard (Autocast rules): never offer a market to a model that may already know its answer.

The Autocast competition rules set a question's *cutoff* to 23:59:59 UTC of the day before its
close date (a question closing 2022-03-23 10:19 UTC has cutoff 2022-03-22 23:59:59), so that no
forecaster uses anything published on the close day. A model whose ``knowledge_cutoff`` is the
date K knows what was published up to the end of K; it may forecast a market only if that is
not after the market's cutoff, i.e. K is before the close date. A market with no known close
uses its resolution date instead.

Every agent of a round sees one snapshot, so the guard removes, for *all* agents, every market
not allowed to the agent with the latest cutoff. The number removed is stored on the cohort and
shown with its results, so a reader knows how much of the dataset the guard took away.

Two things the guard cannot fix are reported instead: an LLM agent of a replay cohort without a
``knowledge_cutoff`` (the guard is off for it), and replay rounds earlier than an agent's cutoff
(the model may know what happened between the round and its cutoff).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from arena.cohorts.config import AgentConfig, CohortConfig
from markets.types import Market, MarketSource

LLM_KIND = "llm"


def guarded(kind: str, settings: Mapping[str, Any]) -> bool:
    """Whether the guard concerns an agent: an LLM, unless it is the mock provider (a seeded
    policy trained on nothing, so there is nothing it could know of the outcomes)."""
    return kind == LLM_KIND and settings.get("provider") != "mock"


def knowledge_ends(value: object) -> datetime:
    """The end of a ``knowledge_cutoff`` day (the next midnight, UTC): the model may know anything before."""
    day = _as_date(value)
    return datetime.combine(day, time(), tzinfo=UTC) + timedelta(days=1)


def market_cutoff(market: Market, resolved_at: datetime | None) -> datetime | None:
    """23:59:59 UTC of the day before the close date (resolution date when no close is known)."""
    closes = market.close_time or resolved_at
    if closes is None:
        return None
    day_before = closes.astimezone(UTC).date() - timedelta(days=1)
    return datetime.combine(day_before, time(23, 59, 59), tzinfo=UTC)


def knowledge_cutoff(config: CohortConfig) -> datetime | None:
    """The end of the latest ``knowledge_cutoff`` day among the agents, or None if none declares one."""
    ends = [knowledge_ends(a.settings["knowledge_cutoff"]) for a in config.agents if _cutoff_of(a)]
    return max(ends, default=None)


def allowed(market: Market, resolved_at: datetime | None, knows_until: datetime) -> bool:
    """Whether a model knowing everything before ``knows_until`` may forecast the market.

    ``knows_until`` is the end of the cutoff day, so the model's last known instant is one second
    before it (the stored precision of the market cutoff): allowed when that is at or before the
    market's cutoff. A market with neither close nor resolution time cannot be judged: allowed.
    """
    cutoff = market_cutoff(market, resolved_at)
    return cutoff is None or knows_until - timedelta(seconds=1) <= cutoff


def excluded_markets(config: CohortConfig, source: MarketSource) -> frozenset[str]:
    """Markets the agent with the latest cutoff may not forecast (see ``allowed``)."""
    cutoff = knowledge_cutoff(config)
    if cutoff is None:
        return frozenset()
    return frozenset(market.market_id for market in _not_allowed(source, cutoff, None))


def excluded_in_window(config: CohortConfig, source: MarketSource, start: datetime) -> int:
    """How many excluded markets would otherwise have been open during the cohort (not resolved
    before its start): the number worth reporting, since earlier ones could never have been offered."""
    cutoff = knowledge_cutoff(config)
    if cutoff is None:
        return 0
    return sum(1 for _market in _not_allowed(source, cutoff, start))


def _not_allowed(
    source: MarketSource, knows_until: datetime, open_after: datetime | None
) -> Iterable[Market]:
    """The source's markets that are not ``allowed``, skipping those resolved by ``open_after``
    (never offered to a cohort starting then). A market without a close time is judged by its
    resolution, known to the source up to a day after the cutoff day (enough to decide it)."""
    horizon = knows_until + timedelta(days=1)
    resolved = {r.market_id: r.resolved_at for r in source.resolutions(horizon)}
    for market in _markets(source, knows_until):
        when = resolved.get(market.market_id)
        if open_after is not None and when is not None and when <= open_after:
            continue
        if not allowed(market, when, knows_until):
            yield market


def _markets(source: MarketSource, knows_until: datetime) -> list[Market]:
    """The markets to judge: a replay dataset's every market; otherwise those open at the cutoff
    (a live cohort starts after it, so a market that closed before then is never offered)."""
    dataset = getattr(source, "dataset", None)
    if dataset is not None:  # a replay source: every market of its dataset, whenever it was open
        return list(dataset.markets.values())
    return source.open_markets(knows_until)


def unguarded_agents(config: CohortConfig) -> list[str]:
    """LLM agents of a replay cohort without ``knowledge_cutoff``: the guard is off for them."""
    if config.mode != "replay":
        return []
    return [a.name for a in config.agents if guarded(a.kind, a.settings) and not _cutoff_of(a)]


def rounds_before_cutoff(config: CohortConfig, round_times: Iterable[datetime]) -> dict[str, int]:
    """Per replay agent with a cutoff: how many rounds fall before the end of its cutoff day."""
    if config.mode != "replay":
        return {}
    times = list(round_times)
    found = {
        a.name: sum(1 for t in times if t < knowledge_ends(_cutoff_of(a)))
        for a in config.agents
        if _cutoff_of(a)
    }
    return {name: count for name, count in found.items() if count}


def launch_warnings(config: CohortConfig, round_times: Iterable[datetime]) -> list[str]:
    """What the guard cannot protect in this cohort, one line each (printed and logged at launch)."""
    off = [
        f"leakage guard: off for {name} (an LLM in a replay cohort without knowledge_cutoff: it may "
        "know how the markets resolved)"
        for name in unguarded_agents(config)
    ]
    early = [
        f"leakage guard: {count} replay rounds of {name} fall before its knowledge cutoff "
        "(it may know what happened next); they are flagged"
        for name, count in rounds_before_cutoff(config, round_times).items()
    ]
    return off + early


def _cutoff_of(agent: AgentConfig) -> object:
    return agent.settings.get("knowledge_cutoff")


def _as_date(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))
