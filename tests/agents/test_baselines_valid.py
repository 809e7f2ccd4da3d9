"""Property: whatever the snapshot, portfolio and rules, no rule-based bettor emits a decision the
real portfolio validator (``portfolio.validation.check_actions``) refuses, and every stated
probability is a finite number in [0, 1]."""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta
from decimal import Decimal

from hypothesis import event, given, settings
from hypothesis import strategies as st

from agents.baselines.favorite import FavoriteBettor, FractionSettings
from agents.baselines.momentum_kelly import KellySettings, MomentumKellyBettor
from agents.baselines.passive import HoldBettor, MarketBettor
from agents.baselines.random_bets import RandomBettor, RandomSettings
from agents.crowd import CrowdBettor, CrowdSettings
from agents.types import AgentView, Bettor, Decision
from markets.types import BINARY_OUTCOMES, NO, YES, SnapshotEntry
from portfolio.actions import Bet
from portfolio.quotes import MidQuotes
from portfolio.rules import Rules
from portfolio.validation import check_actions
from tests.agents.test_baselines_builders import T0, entry, position, view

D = Decimal
EDGE_PRICES = [D(0), D(1), D("0.5"), D("0.000001"), D("0.999999"), D("NaN"), D("1.2"), D("-0.1")]
valid_prices = st.decimals(min_value=D("0.001"), max_value=D("0.999"), places=3)
# Mostly tradable prices (so bettors do bet), sometimes missing or broken ones.
prices = st.one_of(valid_prices, valid_prices, valid_prices, st.none(), st.sampled_from(EDGE_PRICES))
money = st.one_of(
    st.sampled_from([D(10000), D("1234.567891"), D(200), D("49.99"), D(0)]),
    st.decimals(min_value=D(0), max_value=D(30000), places=6),
)


@st.composite
def entries(draw: st.DrawFn, index: int) -> SnapshotEntry:
    venue_id = f"m{index}"
    volume = draw(st.one_of(st.none(), st.integers(0, 10**7).map(str)))
    history = draw(
        st.lists(
            st.tuples(st.integers(0, 30), st.decimals(min_value=D(0), max_value=D(1), places=2)), max_size=4
        )
    )
    points = sorted((T0 - timedelta(days=days), str(p)) for days, p in history)
    if draw(st.booleans()):
        yes = draw(prices)
        no = draw(st.sampled_from(["missing", "complement", "independent"]))
        quoted = {} if yes is None else {YES: str(yes)}
        if no == "complement" and yes is not None and yes.is_finite():
            quoted[NO] = str(1 - yes)
        elif no == "independent" and (other := draw(prices)) is not None:
            quoted[NO] = str(other)
        return entry(venue_id, volume=volume, history=points, prices=quoted)
    outcomes = ("A", "B", "C")
    quoted = {o: str(p) for o in outcomes if (p := draw(prices)) is not None}
    return entry(venue_id, volume=volume, history=points, outcomes=outcomes, prices=quoted)


@st.composite
def views(draw: st.DrawFn) -> AgentView:
    snapshot = [draw(entries(i)) for i in range(draw(st.integers(1, 8)))]
    ids = [e.market.venue_id for e in snapshot]
    held = draw(st.lists(st.sampled_from(ids), unique=True)) if ids else []
    rules = Rules(
        min_bet=draw(
            st.sampled_from([D(50), D(1)]) | st.decimals(min_value=D("0.01"), max_value=D(500), places=2)
        ),
        max_bet_fraction=draw(
            st.sampled_from([D("0.25"), D(1)]) | st.decimals(min_value=D("0.01"), max_value=D(1), places=2)
        ),
    )
    peer_probability = st.floats(min_value=0, max_value=1)
    peers = {
        name: {f"polymarket:{m}": {YES: draw(peer_probability)} for m in draw(st.lists(st.sampled_from(ids)))}
        for name in draw(st.lists(st.sampled_from(["a", "b", "c", "crowd"]), unique=True))
        if ids
    }
    return view(
        *snapshot,
        cash=str(draw(money)),
        positions=[position(m, draw(st.sampled_from(BINARY_OUTCOMES))) for m in held],
        rules=rules,
        round_index=draw(st.integers(0, 500)),
        prices_visible=draw(st.sampled_from([True, True, True, False])),
        peers=peers,
    )


@st.composite
def bettors(draw: st.DrawFn) -> list[Bettor]:
    fraction = FractionSettings(
        fraction=draw(st.decimals(min_value=D("0.001"), max_value=D(1), places=3)),
        max_markets=draw(st.integers(1, 10)),
    )
    kelly = {
        "kelly_fraction": draw(st.decimals(min_value=D("0.01"), max_value=D(1), places=2)),
        "edge_threshold": draw(st.decimals(min_value=D(0), max_value=D("0.5"), places=2)),
        "max_markets": draw(st.integers(1, 10)),
    }
    method = draw(st.sampled_from(["median", "mean", "geo_mean", "geo_mean_odds"]))
    return [
        HoldBettor("hold"),
        MarketBettor("market"),
        RandomBettor(
            "random", RandomSettings(max_bets=draw(st.integers(0, 8))), seed=draw(st.integers(0, 10**9))
        ),
        FavoriteBettor("favorite", fraction),
        FavoriteBettor("contrarian", fraction, against=True),
        MomentumKellyBettor(
            "kelly", KellySettings(momentum=draw(st.sampled_from([D(-2), D(1), D(5)])), **kelly)
        ),
        CrowdBettor("crowd", CrowdSettings(method=method, min_peers=draw(st.integers(1, 3)), **kelly)),
    ]


def _quotes(agent_view: AgentView) -> MidQuotes:
    """The arena's mid quotes for the snapshot: each outcome's own price; NO = 1 − YES if unquoted."""
    table: dict[str, dict[str, Decimal]] = {}
    for item in agent_view.snapshot.entries:
        quoted = dict(item.price.prices)
        if item.market.is_binary and NO not in quoted and YES in quoted and quoted[YES].is_finite():
            quoted[NO] = 1 - quoted[YES]
        table[item.market.market_id] = quoted
    return MidQuotes(
        table, outcomes={e.market.market_id: e.market.outcomes for e in agent_view.snapshot.entries}
    )


async def _decide_all(players: list[Bettor], agent_view: AgentView) -> list[Decision]:
    return list(await asyncio.gather(*(b.decide(agent_view) for b in players)))


@settings(max_examples=400, deadline=None)
@given(agent_view=views(), players=bettors())
def test_no_rule_based_bettor_ever_emits_an_invalid_decision(
    agent_view: AgentView, players: list[Bettor]
) -> None:
    positions = {p.position_id: (p.market_id, p.outcome, p.shares) for p in agent_view.portfolio.positions}
    for bettor, decision in zip(players, asyncio.run(_decide_all(players, agent_view)), strict=True):
        assert not decision.is_error, bettor.name
        errors = check_actions(
            decision.actions,
            cash=agent_view.portfolio.cash,
            rules=agent_view.rules,
            quotes=_quotes(agent_view),
            positions=positions,
        )
        assert errors == [], (bettor.name, [str(e) for e in errors])
        if decision.actions:
            event(f"{bettor.name} bets")
        for action in decision.actions:
            assert isinstance(action, Bet) and action.amount == action.amount.quantize(D("0.01")), bettor.name
            assert agent_view.prices_visible, bettor.name  # nobody bets blind
        for stated in decision.probabilities.values():
            assert all(math.isfinite(p) and 0 <= p <= 1 for p in stated.values()), bettor.name
