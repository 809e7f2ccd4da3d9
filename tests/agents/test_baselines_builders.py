"""Builders shared by the baseline, crowd, scripted and registry tests (no tests in this module)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal

from agents.types import AgentView, Bettor, Decision, PortfolioView, PositionView
from markets.types import BINARY_OUTCOMES, Market, MarketSnapshot, PriceSnapshot, SnapshotEntry, Venue
from portfolio.actions import Bet
from portfolio.rules import Rules

T0 = datetime(2025, 3, 1, tzinfo=UTC)


def entry(
    venue_id: str,
    yes: str | None = None,
    *,
    volume: str | None = None,
    history: Sequence[tuple[datetime, str]] = (),
    outcomes: tuple[str, ...] = BINARY_OUTCOMES,
    prices: Mapping[str, str] | None = None,
    as_of: datetime = T0,
) -> SnapshotEntry:
    """A market ``polymarket:<venue_id>`` with a YES price (binary) or explicit ``prices``."""
    market = Market(
        Venue.POLYMARKET,
        venue_id,
        f"Question {venue_id}?",
        outcomes=outcomes,
        volume=None if volume is None else Decimal(volume),
    )
    quoted = dict(prices or ({} if yes is None else {"YES": yes}))
    snap = PriceSnapshot(market.market_id, {k: Decimal(v) for k, v in quoted.items()}, as_of, "test")
    return SnapshotEntry(market, snap, tuple((t, Decimal(p)) for t, p in history))


def position(venue_id: str, outcome: str = "YES", value: str = "100") -> PositionView:
    return PositionView(
        position_id=f"pos-{venue_id}-{outcome}",
        market_id=f"polymarket:{venue_id}",
        outcome=outcome,
        shares=Decimal(value),
        cost_basis=Decimal(value),
        mark_price=Decimal("0.5"),
        value=Decimal(value),
    )


def view(
    *entries: SnapshotEntry,
    cash: str = "10000",
    positions: Sequence[PositionView] = (),
    rules: Rules | None = None,
    round_index: int = 0,
    prices_visible: bool = True,
    peers: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
    now: datetime = T0,
    previous_round_at: datetime | None = None,
) -> AgentView:
    rules = rules or Rules()
    return AgentView(
        agent_id="agent-1",
        cohort_id="cohort-1",
        round_index=round_index,
        now=now,
        rules=rules,
        portfolio=PortfolioView(Decimal(cash), rules.max_bet(Decimal(cash)), tuple(positions)),
        snapshot=MarketSnapshot(now, tuple(entries)),
        prices_visible=prices_visible,
        peer_probabilities=peers or {},
        previous_round_at=previous_round_at,
    )


def decide(bettor: Bettor, agent_view: AgentView) -> Decision:
    return asyncio.run(bettor.decide(agent_view))


def bets(decision: Decision) -> list[tuple[str, str, Decimal]]:
    """(market id, outcome, amount) of each bet, in order."""
    return [(a.market_id, a.outcome, a.amount) for a in decision.actions if isinstance(a, Bet)]


def pm(venue_id: str) -> str:
    return f"polymarket:{venue_id}"
