"""What an agent is shown: the round's snapshot and its own portfolio, and nothing else.

When the cohort hides prices (all of them, or those of markets in their tournament hidden
period), both the snapshot and the portfolio are stripped of them: held positions are shown at
cost (flagged stale) rather than at a mark that would reveal the price.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta

from agents.tools import Toolbox
from agents.types import AgentView, PortfolioView, PositionView, RequestRecorder
from markets.types import MarketSnapshot, MarketSource
from portfolio import Ledger, MarketId, Prices, Rules
from portfolio.units import outcome_prices


def latest_prices(
    source: MarketSource, market_ids: Collection[str], at: datetime, max_age: timedelta
) -> Prices:
    """Per-outcome prices of ``market_ids`` no older than ``max_age`` (the cohort's
    ``prices.mark_max_age``, for the marks a round takes and the scheduled marks alike). Older
    ones are left out, so the ledger carries its last mark forward, flagged stale, instead of
    using a dead price."""
    found = source.latest_prices(sorted(market_ids), at)
    return {MarketId(m): outcome_prices(p.prices) for m, p in found.items() if at - p.observed_at <= max_age}


def portfolio_view(
    ledger: Ledger,
    at: datetime,
    *,
    open_markets: Collection[str],
    prices_visible: bool,
    hidden: Collection[str] = (),
    questions: Mapping[str, str] | None = None,
) -> PortfolioView:
    """The agent's portfolio; positions in ``hidden`` markets (or all, without ``prices_visible``)
    are shown at cost."""
    valuation = ledger.valuation(at)

    def shown(market_id: str) -> bool:
        return prices_visible and market_id not in hidden

    positions = tuple(
        PositionView(
            position_id=p.position_id,
            market_id=p.market_id,
            outcome=p.outcome,
            shares=p.shares,
            cost_basis=p.cost_basis,
            mark_price=p.price if shown(p.market_id) else None,
            value=p.value if shown(p.market_id) else p.cost_basis,
            stale=p.stale or not shown(p.market_id),
            market_open=p.market_id in open_markets,
            question=(questions or {}).get(p.market_id),
        )
        for p in valuation.positions
    )
    return PortfolioView(cash=ledger.cash, max_bet=ledger.max_bet(), positions=positions)


def agent_view(
    *,
    name: str,
    cohort_id: str,
    round_index: int,
    at: datetime,
    rules: Rules,
    portfolio: PortfolioView,
    snapshot: MarketSnapshot,
    prices_visible: bool,
    previous_round_at: datetime | None,
    peers: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
    toolbox: Toolbox | None = None,
    on_request: RequestRecorder | None = None,
) -> AgentView:
    return AgentView(
        agent_id=name,
        cohort_id=cohort_id,
        round_index=round_index,
        now=at,
        rules=rules,
        portfolio=portfolio,
        snapshot=snapshot,
        prices_visible=prices_visible,
        peer_probabilities=peers or {},
        previous_round_at=previous_round_at,
        toolbox=toolbox,
        on_request=on_request,
    )


def held_markets(ledgers: Sequence[Ledger]) -> set[str]:
    """Every market any of ``ledgers`` holds an open position in."""
    return set().union(*(ledger.open_markets() for ledger in ledgers))
