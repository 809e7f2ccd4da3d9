"""Each baseline's one-line rule, on handmade snapshots with amounts worked out by hand."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal

from agents.baselines.favorite import FavoriteBettor, FractionSettings
from agents.baselines.momentum_kelly import KellySettings, MomentumKellyBettor
from agents.baselines.passive import HalfBettor, HoldBettor, MarketBettor
from agents.baselines.random_bets import RandomBettor, RandomSettings
from agents.types import AgentView, Bettor, PositionView
from markets.types import SnapshotEntry
from portfolio.rules import Rules
from tests.agents.test_baselines_builders import T0, bets, decide, entry, pm, position, view

D = Decimal


def test_every_baseline_satisfies_the_bettor_protocol() -> None:
    bettors = [
        HoldBettor("h"),
        MarketBettor("m"),
        HalfBettor("half"),
        RandomBettor("r", RandomSettings(), seed=1),
        FavoriteBettor("f", FractionSettings()),
        MomentumKellyBettor("k", KellySettings()),
    ]
    for bettor in bettors:
        assert isinstance(bettor, Bettor)
        assert bettor.uses_peers is False


def test_hold_never_bets_nor_states() -> None:
    decision = decide(HoldBettor("h"), view(entry("a", "0.3"), entry("b", "0.9")))
    assert decision.actions == () and decision.probabilities == {} and not decision.is_error


def test_market_states_every_valid_price_and_bets_nothing() -> None:
    multi = entry("m", outcomes=("A", "B", "C"), prices={"A": "0.2", "B": "0.5", "C": "1"})
    agent_view = view(entry("a", "0.37"), entry("zero", "0"), entry("none"), multi)
    decision = decide(MarketBettor("m"), agent_view)
    assert decision.actions == ()
    assert decision.probabilities == {pm("a"): {"YES": 0.37}, pm("m"): {"A": 0.2, "B": 0.5}}


def test_half_states_one_half_everywhere_even_unpriced_or_hidden_and_never_bets() -> None:
    multi = entry("m", outcomes=("A", "B", "C", "D"), prices={"A": "0.2", "B": "0.5", "C": "0.2", "D": "0.1"})
    for visible in (True, False):
        decision = decide(
            HalfBettor("half"), view(entry("a", "0.37"), entry("none"), multi, prices_visible=visible)
        )
        assert decision.actions == ()
        # Binary: 0.5 on YES. Four outcomes: the same know-nothing forecast is 1/4 each.
        assert decision.probabilities == {
            pm("a"): {"YES": 0.5},
            pm("none"): {"YES": 0.5},
            pm("m"): {"A": 0.25, "B": 0.25, "C": 0.25, "D": 0.25},
        }


def test_market_states_nothing_when_prices_are_hidden() -> None:
    decision = decide(MarketBettor("m"), view(entry("a", "0.37"), prices_visible=False))
    assert decision.probabilities == {} and decision.actions == ()


def _favorite_snapshot() -> list[SnapshotEntry]:
    return [
        entry("a", "0.7", volume="100"),
        entry("b", "0.3", volume="300"),
        entry("c", "0.5", volume="900"),  # no favourite at exactly 0.5
        entry("d", "0.9"),  # no volume: ranked last
        entry("e", "0.8", volume="1000"),  # already held
        entry("f", "1", volume="5000"),  # price 1 cannot be bought
    ]


def test_favorite_bets_the_fraction_on_the_side_above_half_by_volume() -> None:
    agent_view = view(*_favorite_snapshot(), positions=[position("e", "NO")])
    decision = decide(FavoriteBettor("f", FractionSettings(fraction=D("0.05"), max_markets=2)), agent_view)
    assert bets(decision) == [(pm("b"), "NO", D("500.00")), (pm("a"), "YES", D("500.00"))]
    assert decision.probabilities == {}


def test_contrarian_takes_the_other_side() -> None:
    agent_view = view(*_favorite_snapshot(), positions=[position("e", "NO")])
    bettor = FavoriteBettor("c", FractionSettings(fraction=D("0.05"), max_markets=3), against=True)
    decision = decide(bettor, agent_view)
    assert bets(decision) == [
        (pm("b"), "YES", D("500.00")),
        (pm("a"), "NO", D("500.00")),
        (pm("d"), "NO", D("500.00")),
    ]


def test_favorite_clamps_to_min_and_max_bet_and_cash() -> None:
    markets = [entry(v, "0.6", volume=str(10 - i)) for i, v in enumerate("pqrst")]
    small = decide(
        FavoriteBettor("f", FractionSettings(fraction=D("0.05"), max_markets=3)), view(*markets, cash="600")
    )
    assert [b[2] for b in bets(small)] == [D("50.00")] * 3  # 30 raised to the $50 minimum

    big = decide(FavoriteBettor("f", FractionSettings(fraction=D("0.5"), max_markets=5)), view(*markets))
    assert [b[2] for b in bets(big)] == [D("2500.00")] * 4  # capped at 25% of cash; cash runs out

    rules = Rules(max_bet_fraction=D("1"))
    tail = decide(
        FavoriteBettor("f", FractionSettings(fraction=D("0.6"), max_markets=5)),
        view(*markets, cash="1000", rules=rules),
    )
    assert [b[2] for b in bets(tail)] == [D("600.00"), D("400.00")]  # the last bet takes what is left


def test_favorite_rounds_down_to_cents_and_holds_when_no_bet_fits() -> None:
    one = [entry("a", "0.6")]
    decision = decide(
        FavoriteBettor("f", FractionSettings(fraction=D("0.05"))), view(*one, cash="1234.567891")
    )
    assert bets(decision) == [(pm("a"), "YES", D("61.72"))]
    broke = decide(FavoriteBettor("f", FractionSettings()), view(*one, cash="199.99"))  # max bet 49.99 < 50
    assert decision.actions and broke.actions == ()


def test_price_needing_baselines_hold_when_prices_are_hidden() -> None:
    agent_view = view(entry("a", "0.7"), entry("b", "0.2"), prices_visible=False)
    for bettor in (
        FavoriteBettor("f", FractionSettings()),
        RandomBettor("r", RandomSettings(), seed=3),
        MomentumKellyBettor("k", KellySettings()),
    ):
        decision = decide(bettor, agent_view)
        assert decision.actions == () and decision.probabilities == {} and not decision.is_error


def _kelly_view(positions: Sequence[PositionView] = ()) -> AgentView:
    lag = T0 - timedelta(days=7)
    return view(
        entry("up", "0.6", history=[(lag - timedelta(days=1), "0.45"), (lag, "0.5"), (T0, "0.6")]),
        entry("down", "0.4", history=[(lag, "0.5")]),
        entry("flat", "0.5", history=[(lag, "0.48")]),  # p = 0.52: edge 0.02 below the threshold
        entry("young", "0.55", history=[(T0 - timedelta(days=1), "0.3")]),  # nothing 7 days back
        entry("bare", "0.35"),
        entry("rocket", "0.9", history=[(lag, "0.5")]),  # 0.9 + 0.4 = 1.3, clamped to 0.99
        positions=positions,
    )


def test_kelly_states_momentum_probabilities_and_bets_fractional_kelly_on_edges() -> None:
    decision = decide(MomentumKellyBettor("k", KellySettings()), _kelly_view())
    assert decision.probabilities == {
        pm("up"): {"YES": 0.7},
        pm("down"): {"YES": 0.3},
        pm("flat"): {"YES": 0.52},
        pm("young"): {"YES": 0.55},
        pm("bare"): {"YES": 0.35},
        pm("rocket"): {"YES": 0.99},
    }
    # full Kelly (p − price)/(1 − price): up 0.1/0.4, down (NO at 0.6, p 0.7) 0.1/0.4, rocket 0.09/0.1;
    # a quarter of it, of $10,000 — rocket's $2,250 fits under the $2,500 max bet.
    assert bets(decision) == [
        (pm("down"), "NO", D("625.00")),
        (pm("up"), "YES", D("625.00")),
        (pm("rocket"), "YES", D("2250.00")),
    ]


def test_kelly_respects_max_markets_threshold_and_held_markets() -> None:
    bettor = MomentumKellyBettor("k", KellySettings(max_markets=1))
    decision = decide(bettor, _kelly_view([position("down", "NO")]))
    assert bets(decision) == [(pm("up"), "YES", D("625.00"))]
    strict = MomentumKellyBettor("k", KellySettings(edge_threshold=D("0.1")))
    assert bets(decide(strict, _kelly_view())) == []  # edges of 0.1 are not > 0.1


def test_kelly_momentum_factor_can_fade_moves() -> None:
    bettor = MomentumKellyBettor("k", KellySettings(momentum=D("-0.5")))
    decision = decide(bettor, _kelly_view())
    assert decision.probabilities[pm("up")] == {"YES": 0.55}  # 0.6 − 0.5 × 0.1


def test_random_is_a_pure_function_of_seed_name_and_round() -> None:
    markets = [entry(f"m{i}", f"0.{i + 1}") for i in range(8)]
    settings = RandomSettings(max_bets=3)
    first = decide(RandomBettor("r", settings, seed=7), view(*markets, round_index=4))
    again = decide(RandomBettor("r", settings, seed=7), view(*markets, round_index=4))  # a restart
    assert first.actions == again.actions and len(first.actions) == 3
    others = [
        decide(RandomBettor("r", settings, seed=8), view(*markets, round_index=4)),
        decide(RandomBettor("r2", settings, seed=7), view(*markets, round_index=4)),
        decide(RandomBettor("r", settings, seed=7), view(*markets, round_index=5)),
    ]
    assert all(other.actions != first.actions for other in others)


def test_random_bets_only_priced_outcomes_within_limits() -> None:
    markets = [entry("ok", "0.4"), entry("dead", "0"), entry("gone")]
    multi = entry("multi", outcomes=("A", "B", "C"), prices={"A": "0.3", "B": "0.7"})
    for round_index in range(30):
        decision = decide(
            RandomBettor("r", RandomSettings(max_bets=5), seed=0),
            view(*markets, multi, round_index=round_index),
        )
        placed = bets(decision)
        assert len(placed) == 2
        for market_id, outcome, amount in placed:
            assert (market_id, outcome) in {
                (pm("ok"), "YES"),
                (pm("ok"), "NO"),
                (pm("multi"), "A"),
                (pm("multi"), "B"),
            }
            assert D(50) <= amount <= D(2500) and amount == amount.quantize(D("0.01"))
