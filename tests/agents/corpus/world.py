"""The round every corpus answer (and most LLM tests) is written against.

Market and position ids here are the ones the bad outputs in this corpus refer to, so an answer
like ``{"type": "sell", "position_id": "other-agent-7"}`` is wrong for a known reason.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from agents.types import AgentView, PortfolioView, PositionView
from markets.types import Market, MarketSnapshot, PriceSnapshot, SnapshotEntry, Venue
from portfolio.rules import Rules

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
D = Decimal

RAIN = "polymarket:rain-paris"  # binary, YES 0.40
FED = "polymarket:fed-cut"  # binary, YES 0.25
ELECTION = "manifold:election"  # multi-outcome
SETTLED_PRICE = "polymarket:decided"  # YES at 1: nothing left to buy
CLOSED = "polymarket:closed-vote"  # closed for trading, awaiting resolution (not in the snapshot)

OWN_POSITION = "pos-rain-yes"  # open, market trading
CLOSED_POSITION = "pos-closed-no"  # market closed: cannot be sold
FOREIGN_POSITION = "other-agent-7"  # belongs to another agent: never in this view


def market(
    venue_id: str,
    question: str,
    *,
    outcomes: tuple[str, ...] = ("YES", "NO"),
    volume: str | None = "1000",
    close_in_days: float | None = 30,
    description: str = "Resolves YES if it happens.",
    venue: Venue = Venue.POLYMARKET,
) -> Market:
    close = NOW + timedelta(days=close_in_days) if close_in_days is not None else None
    return Market(
        venue=venue,
        venue_id=venue_id,
        question=question,
        outcomes=outcomes,
        description=description,
        close_time=close,
        volume=D(volume) if volume is not None else None,
    )


def entry(m: Market, prices: dict[str, str]) -> SnapshotEntry:
    snapshot = PriceSnapshot(m.market_id, {k: D(v) for k, v in prices.items()}, NOW, "test")
    return SnapshotEntry(m, snapshot)


def entries() -> tuple[SnapshotEntry, ...]:
    return (
        entry(
            market("rain-paris", "Will it rain in Paris on 2025-03-10?", volume="50000"),
            {"YES": "0.40", "NO": "0.60"},
        ),
        entry(
            market("fed-cut", "Will the Fed cut rates in March 2025?", volume="90000"),
            {"YES": "0.25", "NO": "0.75"},
        ),
        entry(
            market(
                "election",
                "Who wins the 2025 club election?",
                outcomes=("Alice", "Bob", "Carol"),
                venue=Venue.MANIFOLD,
                volume="700",
            ),
            {"Alice": "0.5", "Bob": "0.3", "Carol": "0.2"},
        ),
        entry(market("decided", "Did the sun rise on 2025-02-28?", volume="10"), {"YES": "1", "NO": "0"}),
    )


def positions() -> tuple[PositionView, ...]:
    return (
        PositionView(OWN_POSITION, RAIN, "YES", D("1250"), D("500"), D("0.40"), D("500")),
        PositionView(
            CLOSED_POSITION,
            CLOSED,
            "NO",
            D("400"),
            D("200"),
            D("0.55"),
            D("220"),
            stale=True,
            market_open=False,
            question="Will the closed market resolve NO?",
        ),
    )


def view(
    *,
    cash: str = "10000",
    prices_visible: bool = True,
    snapshot_entries: tuple[SnapshotEntry, ...] | None = None,
    held: tuple[PositionView, ...] | None = None,
) -> AgentView:
    return AgentView(
        agent_id="agent-1",
        cohort_id="cohort-1",
        round_index=3,
        now=NOW,
        rules=Rules(),
        portfolio=PortfolioView(D(cash), Rules().max_bet(D(cash)), positions() if held is None else held),
        snapshot=MarketSnapshot(NOW, entries() if snapshot_entries is None else snapshot_entries),
        prices_visible=prices_visible,
    )


def valid_answer() -> dict[str, object]:
    """A decision every rule accepts in ``view()``."""
    return {
        "reasoning": "Rain is likelier than the market thinks; trimming the position is not needed.",
        "actions": [
            {"type": "bet", "market_id": FED, "outcome": "NO", "amount": 300},
            {"type": "bet", "market_id": ELECTION, "outcome": "Bob", "amount": 120.5},
            {"type": "sell", "position_id": OWN_POSITION, "percent": 25},
        ],
        "probabilities": {FED: 0.2, ELECTION: {"Alice": 0.45, "Bob": 0.35, "Carol": 0.2}, RAIN: {"YES": 0.5}},
    }
