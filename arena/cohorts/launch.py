"""Launching a cohort from a config (its life after that, pause/resume/cancel, is ``lifecycle``).

Launching checks everything that could fail later (every agent's settings, plug-ins, scripts and
API keys; the dataset; the start time; the rounds, marks and decisions the cohort implies,
``arena.cohorts.workload``) before anything is written, then freezes the effective config with
its sha256 and creates the cohort and its agents in one transaction. Nothing about a
cohort is read from the TOML again: an agent's model can never change mid-cohort.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic_core import to_jsonable_python
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from agents.registry import AgentConfigError, shown_model, validate_agent
from arena.cohorts.config import CohortConfig, ConfigError, start_problem
from arena.cohorts.leakage import excluded_in_window, knowledge_cutoff, launch_warnings
from arena.cohorts.seats import seats
from arena.cohorts.workload import Work, check_work, implied_work
from arena.core.clock import Clock
from arena.core.provenance import git_commit_label, package_version
from arena.db.engine import session_scope
from arena.db.models import AgentRow, CohortRow
from arena.db.upsert import insert_ignore
from markets.types import MarketSource


@dataclass(frozen=True)
class Launched:
    cohort_id: str
    config: CohortConfig
    excluded: int
    created: bool  # False: a cohort with this id and the same config already existed
    warnings: tuple[str, ...] = ()  # what the leakage guard cannot protect (see arena.cohorts.leakage)
    work: Work | None = None  # what the cohort implies: rounds, marks, decisions


def check_agents(config: CohortConfig, environ: Mapping[str, str]) -> None:
    """Validate every agent now (each replicate's seat), so a missing key or a typo fails the
    launch, not round 3."""
    index = {agent.name: i for i, agent in enumerate(config.agents)}
    for seat in seats(config):
        try:
            validate_agent(seat.kind, seat.settings, environ=environ)
        except AgentConfigError as exc:
            raise ConfigError(f"agents[{index[seat.agent]}] ({seat.name}): {exc}") from None


def check_launch(
    config: CohortConfig, *, source: MarketSource, environ: Mapping[str, str], clock: Clock
) -> None:
    """Everything ``launch`` checks (agents, plug-ins, keys, the start against the dataset),
    writing nothing: a batch of configs is checked whole before any of them launches."""
    check_agents(config, environ)
    effective_config(config, source, clock)


def effective_config(config: CohortConfig, source: MarketSource, clock: Clock) -> CohortConfig:
    """The config with its start resolved: the dataset's first instant (replay), or for a live
    cohort the next calendar boundary after now (midnight UTC for daily or slower schedules, else
    the next whole hour), so rounds fall on round times rather than on the launch's second."""
    start = config.start
    end = getattr(source, "end", None) if config.mode == "replay" else None
    if start is None:
        start = (
            getattr(source, "start", None) if config.mode == "replay" else _next_boundary(config, clock.now())
        )
        if start is None:
            raise ConfigError("start: the dataset has no prices, so no start time can be chosen")
        if problem := start_problem(start):
            raise ConfigError(f"start: the dataset's first price, {problem}; give a start in range")
    if end is not None and start > end:
        raise ConfigError(f"start: {start.isoformat()} is after the dataset's last instant {end.isoformat()}")
    first = getattr(source, "start", None) if config.mode == "replay" else None
    if first is not None and start < first:
        raise ConfigError(
            f"start: {start.isoformat()} is before the dataset's first price ({first.isoformat()}); "
            "rounds before it would offer no market: start at or after it, or leave start out"
        )
    return config.model_copy(update={"start": start})


def _next_boundary(config: CohortConfig, now: datetime) -> datetime:
    unit = timedelta(days=1) if config.schedule.every >= timedelta(days=1) else timedelta(hours=1)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return epoch - ((epoch - now) // unit) * unit  # ceiling to the unit


def launch(
    engine: Engine,
    config: CohortConfig,
    *,
    source: MarketSource,
    environ: Mapping[str, str],
    clock: Clock,
    cohort_id: str | None = None,
) -> Launched:
    """Create the cohort (status ``pending``) and its agents; see the module docstring."""
    check_agents(config, environ)
    frozen = effective_config(config, source, clock)
    assert frozen.start is not None
    work = implied_work(
        frozen, frozen.start, getattr(source, "end", None) if frozen.mode == "replay" else None
    )
    check_work(frozen, work)
    excluded = excluded_in_window(frozen, source, frozen.start)
    # returned, not logged: the command prints each once (a log line printed it a second time)
    warnings = tuple(launch_warnings(frozen, _round_times_before_cutoff(frozen, source)))
    now = clock.now()
    with session_scope(engine) as session:
        if cohort_id is not None:
            existing = session.get(CohortRow, cohort_id)
            if existing is not None:
                if existing.config_hash != frozen.config_hash():
                    raise ConfigError(f"cohort {cohort_id!r} already exists with a different config")
                return Launched(cohort_id, frozen, existing.excluded_markets, False, warnings, work)
        chosen = cohort_id or free_cohort_id(session, frozen.name, now)
        insert_cohort(session, chosen, frozen, excluded=excluded, now=now)
    return Launched(chosen, frozen, excluded, True, warnings, work)


def _round_times_before_cutoff(config: CohortConfig, source: MarketSource) -> Iterator[datetime]:
    """The cohort's round times up to the latest knowledge cutoff (all a warning needs to count)."""
    cutoff, start, end = knowledge_cutoff(config), config.start, getattr(source, "end", None)
    if cutoff is None or start is None:
        return
    index, at = 0, start
    while at < cutoff and (end is None or at <= end) and index < (config.schedule.rounds or index + 1):
        yield at
        index += 1
        at = start + config.schedule.every * index


def insert_cohort(
    session: Session,
    cohort_id: str,
    config: CohortConfig,
    *,
    excluded: int = 0,
    now: datetime,
    status: str = "pending",
) -> None:
    """The cohort row (config frozen with its hash) and its agents' rows, ``status`` as given
    (``pending`` for a launch; an imported forecast set is ``completed`` from the start)."""
    row: dict[str, Any] = {
        "id": cohort_id,
        "name": config.name,
        "mode": config.mode,
        "status": status,
        "seed": config.seed,
        "config_json": config.model_dump(mode="json"),
        "config_hash": config.config_hash(),
        "arena_version": package_version(),
        "git_commit": git_commit_label(),
        "excluded_markets": excluded,
        "created_at": now,
    }
    if not insert_ignore(session, CohortRow, [row], on=["id"]):
        raise ConfigError(f"cohort id {cohort_id!r} is taken; choose another --id")
    session.add_all(
        AgentRow(
            cohort_id=cohort_id,
            name=seat.name,
            kind=seat.kind,
            model_id=shown_model(seat.kind, seat.settings),
            settings_json=to_jsonable_python(seat.settings),  # as frozen: a TOML date is an ISO string
            created_at=now,
        )
        for seat in seats(config)
    )


def free_cohort_id(session: Session, name: str, now: datetime) -> str:
    """``<name-slug>-<UTC timestamp>``, with a counter if that is taken (ids are readable and sortable)."""
    base = f"{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-') or 'cohort'}-{now:%Y%m%d-%H%M%S}"
    taken = set(session.exec(select(CohortRow.id).where(col(CohortRow.id).startswith(base))).all())
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    return candidate
