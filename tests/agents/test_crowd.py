"""The crowd ensemble: aggregation numbers worked out by hand, peer handling, and its Kelly bets."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from agents.crowd import CrowdBettor, CrowdSettings, aggregate, peer_yes_probability
from agents.types import Bettor
from tests.agents.test_baselines_builders import bets, decide, entry, pm, view

PEERS = {
    "alice": {pm("a"): {"YES": 0.6}, pm("b"): {"YES": 0.2}},
    "bob": {pm("a"): {"YES": 0.7}},
    "carol": {pm("a"): {"NO": 0.05}},  # P(YES) = 0.95
    "crowd": {pm("a"): {"YES": 0.01}, pm("b"): {"YES": 0.9}},  # itself: never counted
}


def test_median_mean_and_geometric_mean_of_odds_by_hand() -> None:
    probabilities = [0.6, 0.7, 0.95]
    assert aggregate(probabilities, "median") == 0.7
    assert aggregate(probabilities, "mean") == pytest.approx(0.75)
    # odds 1.5 × 7/3 × 19 = 66.5; cube root 4.0514…; back to a probability 4.0514 / 5.0514
    odds = 66.5 ** (1 / 3)
    assert aggregate(probabilities, "geo_mean_odds") == pytest.approx(odds / (1 + odds))
    assert aggregate(probabilities, "geo_mean_odds") == pytest.approx(0.80204, abs=1e-5)


def test_geometric_mean_of_probabilities_by_hand_and_not_renormalised() -> None:
    # 0.6 × 0.7 × 0.95 = 0.399; cube root 0.73619…
    assert aggregate([0.6, 0.7, 0.95], "geo_mean") == pytest.approx(0.399 ** (1 / 3))
    assert aggregate([0.6, 0.7, 0.95], "geo_mean") == pytest.approx(0.73619, abs=1e-5)
    # Of P(NO): 0.4 × 0.3 × 0.05 = 0.006, cube root 0.18171…: the two readings add to 0.918, not 1.
    assert aggregate([0.4, 0.3, 0.05], "geo_mean") == pytest.approx(0.18171, abs=1e-5)
    # A stated 0 is read as 0.01, so one peer cannot make the crowd certain: √(0.01 × 0.64) = 0.08.
    assert aggregate([0.0, 0.64], "geo_mean") == pytest.approx(0.08)


def test_geometric_mean_of_odds_clips_certainties() -> None:
    # 1.0 is read as 0.99 (odds 99) and 0.0 as 0.01 (odds 1/99): they cancel to even odds.
    assert aggregate([1.0, 0.0], "geo_mean_odds") == pytest.approx(0.5)
    assert math.isfinite(aggregate([1.0, 1.0], "geo_mean_odds"))


def test_peer_probability_reads_yes_or_the_complement_of_no_and_ignores_nonsense() -> None:
    assert peer_yes_probability({"YES": 0.3}) == 0.3
    assert peer_yes_probability({"NO": 0.25}) == 0.75
    assert peer_yes_probability({}) is None
    assert peer_yes_probability({"YES": 1.5}) is None
    assert peer_yes_probability({"YES": math.nan}) is None


@pytest.mark.parametrize(("method", "expected"), [("median", 0.7), ("mean", 0.75)])
def test_crowd_states_the_aggregate_of_other_agents_and_bets_kelly(method: str, expected: float) -> None:
    bettor = CrowdBettor("crowd", CrowdSettings(method=method))  # type: ignore[arg-type]
    decision = decide(bettor, view(entry("a", "0.6"), entry("b", "0.5"), peers=PEERS))
    # b has one peer besides itself (< min_peers = 2): nothing stated, no bet.
    assert decision.probabilities == {pm("a"): {"YES": pytest.approx(expected)}}
    # median 0.7 vs price 0.6: full Kelly 0.1/0.4 = 0.25, a quarter of it of $10,000 = $625.
    # mean 0.75: 0.15/0.4 = 0.375 → $937.50.
    amount = {"median": Decimal("625.00"), "mean": Decimal("937.50")}[method]
    assert bets(decision) == [(pm("a"), "YES", amount)]


def test_crowd_min_peers_and_uses_peers_flag() -> None:
    bettor = CrowdBettor("crowd", CrowdSettings(min_peers=1))
    assert isinstance(bettor, Bettor) and bettor.uses_peers is True
    decision = decide(bettor, view(entry("a", "0.6"), entry("b", "0.5"), peers=PEERS))
    assert decision.probabilities[pm("b")] == {"YES": 0.2}
    assert (pm("b"), "NO", Decimal("1500.00")) in bets(decision)  # NO at 0.5 believed 0.8: 0.25 × 0.6


def test_crowd_with_hidden_prices_states_but_never_bets() -> None:
    bettor = CrowdBettor("crowd", CrowdSettings())
    decision = decide(bettor, view(entry("a", "0.6"), peers=PEERS, prices_visible=False))
    assert decision.probabilities == {pm("a"): {"YES": 0.7}}
    assert decision.actions == ()


def test_crowd_without_peers_states_nothing() -> None:
    decision = decide(CrowdBettor("crowd", CrowdSettings()), view(entry("a", "0.6")))
    assert decision.probabilities == {} and decision.actions == ()
