"""One decision round of a cohort, as data flows (docs/architecture.md, "The life of a round").

1. The universe snapshot as of the round time is taken, filtered, hashed and stored; a re-run of
   the round must find the same hash (the same markets at the same prices) or it stops. A live
   round with nothing to trade is stored as empty, and nobody is asked (``empty``).
2. Every unfinished decision is claimed (``claims``) before any agent is asked anything.
3. Agents are asked concurrently on the same snapshot; ensemble agents (``uses_peers``) go in a
   second phase with the stated probabilities of the first.
4. Each answer is stamped with the time it came in, then validated and executed atomically on
   the agent's ledger at the snapshot's quotes, the fills stamped with the time they executed;
   every agent's decision, fills and position updates of the phase are committed in ONE
   transaction, which also proves each claim is still ours (``commit``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cached_property

from sqlalchemy import bindparam
from sqlmodel import Session, col, select

from agents.baselines import UNINFORMED_KINDS
from agents.types import AgentView, Decision
from arena.db.engine import session_scope
from arena.db.models import AgentRow, DecisionRow
from arena.db.offered import first_offered
from arena.engine.rounds.asking import Answer, Call, ask_all
from arena.engine.rounds.commit import Pending, store_phase
from arena.engine.rounds.decisions import markets_traded
from arena.engine.rounds.empty import nothing_to_trade, record_empty
from arena.engine.rounds.report import RoundReport, close_round, read_report
from arena.engine.rounds.universe import hide_prices, select_universe
from arena.engine.runtime.budgets import has_caps, held_for_budget, spend_by_agent
from arena.engine.runtime.cohort import AgentSlot, CohortRuntime
from arena.engine.runtime.quotes import build_quotes
from arena.engine.runtime.views import agent_view, held_markets, latest_prices, portfolio_view
from arena.engine.store.charges import ChargeRecorder
from arena.engine.store.claims import DONE, ERROR, REJECTED, Claim, ClaimResult, claim_round, new_token
from arena.engine.store.ledger_store import committed
from arena.engine.store.round_store import closed_by, market_questions, open_round
from arena.tools.base import RoundFacts, ToolContext
from arena.tools.news_tool import corpus_search
from arena.tools.toolbox import ArenaToolbox
from markets.types import MarketSnapshot
from portfolio import FreshMarks, MarketId, Quotes

log = logging.getLogger("arena.engine.rounds.run")

# Built once (why: ``round_store.ROUND_AT_INDEX``).
_PEERS = (
    select(AgentRow.id, AgentRow.name, DecisionRow.probabilities_json)
    .join(DecisionRow, col(DecisionRow.agent_id) == col(AgentRow.id))
    # a rejected decision's probabilities are its forecasts too (``arena.core.decisions``)
    .where(col(DecisionRow.round_id) == bindparam("round_id"), col(DecisionRow.status).in_((DONE, REJECTED)))
)


def round_time(start: datetime, every: timedelta, index: int) -> datetime:
    return start + every * index


async def run_round(rt: CohortRuntime, index: int, at: datetime) -> RoundReport:
    """Run round ``index`` at ``at``, or finish it if an earlier run was interrupted."""
    finished = read_report(rt, index, only_final=True)
    if finished is not None:
        return finished
    full, universe = round_snapshot(rt, at)
    reason = nothing_to_trade(rt, full, universe)
    if reason is not None and (empty := record_empty(rt, index, at, universe, reason)) is not None:
        return empty
    with session_scope(rt.engine) as session:
        round_id, claims = open_and_claim(session, rt, index, at, universe, new_token())
    if claims.claimed:
        rt.refresh(list(claims.claimed))
        plan = RoundPlan(rt, index, at, round_id, full, universe)
        deadline = asyncio.get_running_loop().time() + rt.config.round_budget.total_seconds()
        first = [s for s in rt.agents if s.id in claims.claimed and not s.uses_peers]
        await plan.phase(first, claims.claimed, deadline, peers=None)
        second = [s for s in rt.agents if s.id in claims.claimed and s.uses_peers]
        if second:
            await plan.phase(second, claims.claimed, deadline, peers=peer_probabilities(rt, round_id))
    return close_round(rt, round_id, index, at)


def open_and_claim(
    session: Session, rt: CohortRuntime, index: int, at: datetime, universe: MarketSnapshot, token: str
) -> tuple[int, ClaimResult]:
    """Open round ``index`` (or find it opened by an earlier run) with ``universe`` and claim its
    decisions for every agent under ``token``, in ``session``: the round's id and the claims."""
    round_id = open_round(session, rt.cohort_id, index, at, universe, started_at=rt.happened_at(at))
    claims = claim_round(
        session,
        round_id=round_id,
        cohort_id=rt.cohort_id,
        agent_ids=[a.id for a in rt.agents],
        token=token,
        now=rt.lease_clock.now(),
        lease=rt.claim_lease,
    )
    return round_id, claims


def round_snapshot(rt: CohortRuntime, at: datetime) -> tuple[MarketSnapshot, MarketSnapshot]:
    """The full snapshot as of ``at`` and the round's universe drawn from it."""
    full = rt.source.snapshot(at)
    return full, select_universe(full, rt.config.universe, rt.excluded)


@dataclass
class RoundPlan:
    """What every agent of the round shares: the snapshot, its visibility, open markets."""

    rt: CohortRuntime
    index: int
    at: datetime
    round_id: int
    full: MarketSnapshot
    universe: MarketSnapshot
    # The agents this plan asks (default: all). Positions of the others do not change what these
    # are shown: hidden prices and questions are per market.
    serving: list[AgentSlot] | None = None

    def __post_init__(self) -> None:
        cfg = self.rt.config
        self.visible = cfg.price_visibility.visible_at(self.rt.start, self.at)
        # closed markets are not traded, whatever the source served (held ones wait for settlement)
        self.tradable = {e.market.market_id: e for e in self.full.entries if not e.market.is_closed(self.at)}
        slots = self.rt.agents if self.serving is None else self.serving
        held = held_markets([s.book.ledger for s in slots])
        self.hidden = self._in_hidden_period({e.market.market_id for e in self.universe.entries} | held)
        self.shown = hide_prices(self.universe, None if not self.visible else self.hidden)
        self.open_markets = self.rt.source.open_markets(self.at)
        self.open_ids = {m.market_id for m in self.open_markets}
        self.previous = self.at - cfg.schedule.every if self.index > 0 else None
        self.questions = market_questions(self.rt.engine, held)
        self._priced = frozenset(held)
        self._marks = self._fresh_marks()
        self.rules = self.rt.rules  # built from the config on each read: once per round, not per agent
        self.capped = has_caps(cfg)

    def _in_hidden_period(self, shown: set[str]) -> frozenset[str]:
        """Of the markets ``shown`` to agents (offered, held, or open to the research tools), those
        whose tournament window (the Metaculus rules) is still in its hidden period at this round,
        and those never offered yet (their window opens hidden when they are): their prices are
        not shown, so no agent can copy the market while it is hidden, nor look it up before."""
        tournament, end = self.rt.config.tournament, self.rt.decisions_end
        if tournament.hidden_fraction == 0:
            return frozenset()
        closes = {m: self.tradable[m].market.close_time for m in shown if m in self.tradable}
        with session_scope(self.rt.engine, write=False) as session:
            opened = first_offered(session.connection(), [self.rt.cohort_id], closes)
        visible = {
            m for _, m, opens in opened if self.at >= tournament.window(opens, closes[m], end).hidden_until
        }
        return frozenset(set(closes) - visible)

    @cached_property
    def tool_facts(self) -> RoundFacts:
        """What the research tools read this round (arena/tools): every open market the leakage
        guard allows, the full snapshot's prices, and the same price visibility as the prompt,
        with the hidden period judged over every open market, not only those offered."""
        cfg = self.rt.config
        return RoundFacts.build(
            self.at,
            self.full,
            self.open_markets,
            excluded=self.rt.excluded,
            prices_visible=self.visible,
            hidden=self._in_hidden_period(set(self.tradable)),
            news=None if cfg.tools.corpus is None else corpus_search(self.rt.engine, cfg.tools.corpus),
            news_lag=cfg.tools.news_lag,
        )

    def view(
        self, slot: AgentSlot, peers: dict[str, dict[str, dict[str, float]]] | None, claim: Claim
    ) -> AgentView:
        """What the agent is shown; its provider requests are recorded under ``claim`` as they
        answer (``store.charges``)."""
        ledger = slot.book.ledger
        ledger.mark(self._marks_for(ledger.open_markets()), self.at)
        portfolio = portfolio_view(
            ledger,
            self.at,
            open_markets=self.open_ids,
            prices_visible=self.visible,
            hidden=self.hidden,
            questions=self.questions,
        )
        return agent_view(
            name=slot.name,
            cohort_id=self.rt.cohort_id,
            round_index=self.index,
            at=self.at,
            rules=self.rules,
            portfolio=portfolio,
            snapshot=self.shown,
            prices_visible=self.visible,
            previous_round_at=self.previous,
            peers=peers,
            toolbox=ArenaToolbox(ToolContext(self.tool_facts, portfolio)),
            on_request=ChargeRecorder(self.rt.engine, claim, self._now),
        )

    def _marks_for(self, held: frozenset[MarketId]) -> FreshMarks:
        """The round's marks of every market held when it began, shared by every agent
        (``FreshMarks``); priced again, for a wider set, only if an agent holds a market not
        priced yet (its ledger was reloaded meanwhile)."""
        if not held <= self._priced:
            self._priced |= held
            self._marks = self._fresh_marks()
        return self._marks

    def _fresh_marks(self) -> FreshMarks:
        max_age = self.rt.config.prices.mark_max_age
        return FreshMarks(latest_prices(self.rt.source, self._priced, self.at, max_age), self.at)

    def closed_markets(
        self, slots: list[AgentSlot], answers: Mapping[str, Decision]
    ) -> dict[MarketId, datetime]:
        """The closed markets (with their close times) that the answers try to trade: none is
        quoted, and each such leg is refused naming its close."""
        named: set[MarketId] = set()
        for s in slots:
            named |= markets_traded(answers[s.name].actions, s.book.ledger)
        return closed_by(self.rt.engine, named - self.tradable.keys(), self.at)

    def quotes_for(self, slot: AgentSlot) -> Quotes:
        """Quotes for the round's universe plus the open markets the agent holds (so it can sell)."""
        entries = {e.market.market_id: e for e in self.universe.entries}
        for position in slot.book.ledger.open_positions():
            if position.market_id in self.tradable:
                entries.setdefault(position.market_id, self.tradable[position.market_id])
        pairs = [(e.market, e.price) for e in entries.values()]
        return build_quotes(
            self.rt.config.fills,
            pairs,
            venue_of={e.market.market_id: e.market.venue for e in entries.values()},
        )

    async def phase(
        self,
        slots: list[AgentSlot],
        claims: dict[int, Claim],
        deadline: float,
        peers: dict[str, dict[str, dict[str, float]]] | None,
    ) -> None:
        answers = await self.ask(slots, deadline, peers, claims)
        self.commit_phase(slots, claims, answers)

    async def ask(
        self,
        slots: list[AgentSlot],
        deadline: float,
        peers: dict[str, dict[str, dict[str, float]]] | None,
        claims: Mapping[int, Claim],
        spent: Mapping[int, Decimal] | None = None,
    ) -> dict[str, Answer]:
        """Every agent's answer by name, stamped when it came in (an agent over its spending
        budget holds unasked), each asked under its claim in ``claims``; ``spent``: the spend
        read before the phase (default: read now)."""
        cfg = self.rt.config
        if self.capped and spent is None:
            spent = spend_by_agent(self.rt.engine, self.rt.cohort_id)
        held = held_for_budget(cfg, slots, spent) if spent is not None else {}
        calls = [
            Call(s.name, s.bettor, self.view(s, peers, claims[s.id])) for s in slots if s.name not in held
        ]
        remaining = timedelta(seconds=deadline - asyncio.get_running_loop().time())
        answers = await ask_all(
            calls,
            concurrency=cfg.concurrency,
            call_timeout=cfg.call_timeout,
            budget=remaining,
            now=self._now,
        )
        held_at = self._now()
        answers.update({name: Answer(decision, held_at) for name, decision in held.items()})
        return answers

    def _now(self) -> datetime:
        """The time of something happening now in this round (``CohortRuntime.happened_at``)."""
        return self.rt.happened_at(self.at)

    def commit_phase(
        self, slots: list[AgentSlot], claims: dict[int, Claim], answers: dict[str, Answer]
    ) -> dict[int, str]:
        """Execute every agent's answer on its ledger and store them all in ONE transaction
        (``commit.store_phase``); ledgers whose decision was not stored are rebuilt from the
        database. Returns the status stored for each agent, by id (none for a claim taken over)."""
        closed = self.closed_markets(slots, {name: answer.decision for name, answer in answers.items()})
        pending = [Pending(s, claims[s.id], answers[s.name], self.quotes_for(s), closed) for s in slots]
        try:
            with session_scope(self.rt.engine) as session:
                stored = store_phase(session, pending, executed_at=self._now)
        except BaseException:
            self.rt.reload([s.id for s in slots])
            raise
        for s in stored.lost:
            log.warning(
                "round %s, agent %s: the claim was taken over; nothing executed by this runner",
                self.index,
                s.slot.name,
            )
        dropped = {s.slot.id for s in stored.lost + stored.conflicts}
        for s in stored.staged:
            if s.slot.id not in dropped:
                committed(s.slot.book, s.outcome.fills)
        if dropped:
            self.rt.reload(sorted(dropped))
        lost = {s.slot.id for s in stored.lost}
        conflicts = {s.slot.id for s in stored.conflicts}
        return {
            s.slot.id: ERROR if s.slot.id in conflicts else s.outcome.status
            for s in stored.staged
            if s.slot.id not in lost
        }


def peer_probabilities(rt: CohortRuntime, round_id: int) -> dict[str, dict[str, dict[str, float]]]:
    """Stated probabilities of the round's finished first-phase agents (not ``UNINFORMED_KINDS``),
    read back from the database so an interrupted round resumed later gives the ensemble the very
    same inputs."""
    first = {s.id for s in rt.agents if not s.uses_peers and s.kind not in UNINFORMED_KINDS}
    with session_scope(rt.engine, write=False) as session:
        rows = session.exec(_PEERS, params={"round_id": round_id}).all()
    return {name: dict(probs) for agent_id, name, probs in rows if agent_id in first and probs}
