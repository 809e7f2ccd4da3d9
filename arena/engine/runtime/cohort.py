"""A cohort ready to run: its frozen config, its agents' bettors and in-memory ledgers, its source.

Everything is rebuilt from the database (config from the cohort row, ledgers from the fill log),
never from the TOML file, so a cohort resumed after a crash or run by a second process behaves
exactly like the first: same agents, same models, same rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import Engine
from sqlmodel import col, select

from agents.external import EXTERNAL_KIND
from agents.llm.limits import ProviderLimits
from agents.registry import build_bettor
from agents.types import AgentView, Bettor, Decision
from arena.cohorts.config import CohortConfig, config_from_frozen
from arena.cohorts.leakage import excluded_markets
from arena.core.clock import Clock, SystemClock
from arena.db.engine import session_scope
from arena.db.models import AgentRow, CohortRow
from arena.engine.runtime.agent_http import ClientUnderLimits
from arena.engine.runtime.sources import open_source
from arena.engine.store.ledger_store import AgentBook, fill_counts, load_books
from markets.types import MarketSource
from portfolio import Rules


class CohortNotFound(LookupError):
    pass


class _NoBettor:
    """Stands in for an agent's bettor in jobs that never ask agents anything."""

    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        raise RuntimeError(f"agent {self.name!r} was loaded without its bettor; this job cannot run rounds")


@dataclass
class AgentSlot:
    """One agent of the cohort: its row id, name, bettor and ledger."""

    id: int
    name: str
    kind: str
    bettor: Bettor
    book: AgentBook

    @property
    def uses_peers(self) -> bool:
        return bool(getattr(self.bettor, "uses_peers", False))


@dataclass
class CohortRuntime:
    engine: Engine
    cohort_id: str
    config: CohortConfig
    source: MarketSource
    agents: list[AgentSlot]
    excluded: frozenset[str] = frozenset()
    # Wall clock for claim leases (process liveness), whatever clock drives the cohort.
    lease_clock: Clock = field(default_factory=SystemClock)
    lease: timedelta | None = None
    _slots: dict[int, AgentSlot] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def rules(self) -> Rules:
        return self.config.rules.to_rules()

    @property
    def start(self) -> datetime:
        assert self.config.start is not None, "a launched cohort always has its start frozen"
        return self.config.start

    def planned_rounds(self) -> int:
        """The configured number of rounds; in replay, never more than fit before the data ends
        (``rounds`` unset: every round time up to the dataset's last instant)."""
        rounds = self.config.schedule.rounds
        if self.config.mode != "replay":
            return rounds or 0
        end = getattr(self.source, "end", None)
        fits = 0 if end is None or end < self.start else (end - self.start) // self.config.schedule.every + 1
        return fits if rounds is None else min(rounds, fits)

    @property
    def decisions_end(self) -> datetime:
        """When the last round's decisions stop standing: ``start + every × rounds``; a replay
        without ``rounds`` runs until its data ends, so one period after its last planned round
        (what scoring reads, one period after the last round stored, once the replay has run)."""
        configured = self.config.decisions_end
        if configured is not None:
            return configured
        return self.start + self.config.schedule.every * self.planned_rounds()

    @property
    def claim_lease(self) -> timedelta:
        """How long a claim protects a decision: the whole round budget plus one call, by default."""
        return self.lease or (self.config.round_budget + self.config.call_timeout)

    def happened_at(self, at: datetime) -> datetime:
        """The time to store for something done now for the round at ``at``: in a live cohort the
        real time (the injected clock the job runs on), in a replay ``at`` itself, simulated time
        being the replay's clock (so a replay stores the same rows whenever it runs)."""
        return self.lease_clock.now() if self.config.mode == "live" else at

    def slot(self, agent_id: int) -> AgentSlot:
        """The agent's slot, through an index of ``agents`` built on first use (a round and a mark
        look up every agent: scanning the list each time grew with the square of the agents)."""
        found = self._slots.get(agent_id)
        if found is None:
            self._slots = {s.id: s for s in self.agents}
            found = self._slots[agent_id]
        return found

    def reload(self, agent_ids: list[int] | None = None) -> None:
        """Rebuild ledgers from the database (after a failed commit, or another writer's change)."""
        ids = agent_ids or [s.id for s in self.agents]
        with session_scope(self.engine, write=False, snapshot=True) as session:
            books = load_books(session, self.rules, ids)
        for agent_id, book in books.items():
            self.slot(agent_id).book = book

    def refresh(self, agent_ids: list[int]) -> None:
        """Reload the ledgers another process has moved since they were loaded (one count query),
        so an agent is never shown, or executed against, a stale portfolio."""
        with session_scope(self.engine, write=False) as session:
            stored = fill_counts(session, agent_ids)
        stale = [a for a in agent_ids if stored.get(a, 0) != self.slot(a).book.fill_count]
        if stale:
            self.reload(stale)


def load_runtime(
    engine: Engine,
    cohort_id: str,
    *,
    source: MarketSource | None = None,
    environ: Mapping[str, str],
    new_http_client: ClientUnderLimits | None = None,
    lease_clock: Clock | None = None,
    with_bettors: bool = True,
) -> CohortRuntime:
    """The cohort ``cohort_id`` with bettors built from its frozen agent settings.

    The frozen config is parsed here, once per command: callers read it from ``rt.config`` rather
    than parsing it again. ``source``: the cohort's own (its dataset, or the synced live markets)
    unless given (tests and audits wrap it). ``with_bettors=False`` is for jobs that only move
    ledgers (marks, settlement): they need no API key, so a missing key can never stop a settlement.
    """
    with session_scope(engine, write=False, snapshot=True) as session:  # ledgers: fills and positions
        cohort = session.get(CohortRow, cohort_id)
        if cohort is None:
            raise CohortNotFound(f"no cohort with id {cohort_id!r} (see `arena cohort list`)")
        config = config_from_frozen(cohort.config_json)
        # External forecasters are seated for scoring only: the arena never runs them.
        rows = session.exec(
            select(AgentRow)
            .where(AgentRow.cohort_id == cohort_id, AgentRow.kind != EXTERNAL_KIND)
            .order_by(col(AgentRow.id))
        ).all()
        books = load_books(session, config.rules.to_rules(), [r.id for r in rows if r.id is not None])
    source = source or open_source(config, engine)
    llm = config.llm_limits
    limits = ProviderLimits(llm.requests_per_second, llm.max_in_flight, llm.max_pause_s)

    def bettor(row: AgentRow) -> Bettor:
        if not with_bettors:
            return _NoBettor(row.name)
        return build_bettor(
            row.name,
            row.kind,
            row.settings_json,
            seed=cohort.seed,
            environ=environ,
            new_http_client=None if new_http_client is None else partial(new_http_client, limits),
        )

    agents = [AgentSlot(r.id, r.name, r.kind, bettor(r), books[r.id]) for r in rows if r.id is not None]
    return CohortRuntime(
        engine=engine,
        cohort_id=cohort_id,
        config=config,
        source=source,
        agents=agents,
        excluded=excluded_markets(config, source),
        lease_clock=lease_clock or SystemClock(),
    )
