"""Complete stated readings by hand: imputation at the market price, provisional scores on open
markets, the Autocast-normalised Brier, and their intervals and comparisons with the leader."""

from __future__ import annotations

import math

import pytest

from arena.scoring import leaderboard
from arena.scoring.board.ranking import point_estimates
from arena.scoring.rules.imputed import imputed_event_scores, resolved_offers, stated_offers
from tests.scoring.builders import Row, build, day, inputs, price, resolution, seat, statement

X, Y, Z, M = "polymarket:x", "polymarket:y", "polymarket:z", "polymarket:m"


def offer(market: str, at: float, p: float, outcome: str = "YES", cohort: str = "c1") -> Row:
    return {"cohort_id": cohort, "market_id": market, "outcome": outcome, "offered_at": day(at), "price": p}


def _world():
    """Rounds on day 0 and day 2 offer X (YES 0.5, then 0.7) and Y (YES 0.4, then 0.2); day 0
    also offers Z (never resolves; last price 0.8 on day 3) and M, outcomes A/B/C at 0.2/0.5/0.3.
    X resolves YES, Y NO, M B, all on day 4.

    a states X 0.6 and M (A 0.1, B 0.8, C 0.1) on day 0, and Z 0.9; it never states Y.
    b states nothing.
    """
    return build(
        agents=[seat("a"), seat("b")],
        resolutions=[
            resolution(X, "YES", at=day(4)),
            resolution(Y, "NO", at=day(4)),
            resolution(M, "OUTCOME", winner="B", at=day(4)),
        ],
        prices=[price(Z, day(0), 0.6), price(Z, day(3), 0.8)],
        offers=[
            offer(X, 0, 0.5),
            offer(X, 2, 0.7),
            offer(Y, 0, 0.4),
            offer(Y, 2, 0.2),
            offer(Z, 0, 0.6),
            *(offer(M, 0, p, o) for o, p in (("A", 0.2), ("B", 0.5), ("C", 0.3))),
        ],
        forecasts=[
            statement("a", X, 0.6, day(0)),
            statement("a", Z, 0.9, day(0)),
            *(statement("a", M, p, day(0), outcome=o) for o, p in (("A", 0.1), ("B", 0.8), ("C", 0.1))),
        ],
    )


def _by_agent() -> dict[str, dict]:
    return {r["agent"]: r for r in point_estimates(inputs(_world())).iter_rows(named=True)}


def test_a_missing_forecast_takes_the_round_price_and_a_statement_stands_until_replaced() -> None:
    world = _world()
    assert set(resolved_offers(world)["market_id"]) == {X, Y, M}  # Z has not resolved
    rows = stated_offers(world, resolved_offers(world)).filter(agent="a", market_id=X).sort("offered_at")
    # Day 2: a's day-0 statement still stands, so nothing is imputed though the price moved.
    assert rows.select("f", "imputed").rows() == [(0.6, False), (0.6, False)]
    # Y, never stated by a: both rounds at the price, (0.4 − 0)² and (0.2 − 0)².
    events = imputed_event_scores(world).filter(agent="a", market_id=Y)
    assert events.select("rounds", "imputed").row(0) == (2, 2)
    assert events["brier"].item() == pytest.approx((0.16 + 0.04) / 2)


def test_rounds_before_the_first_statement_are_imputed() -> None:
    """c states X only on day 2: day 0 takes the price 0.5, day 2 its 0.9 (YES happened):
    ((0.5 − 1)² + (0.9 − 1)²) / 2 = (0.25 + 0.01) / 2, one of two rounds imputed."""
    world = build(
        agents=[seat("c")],
        resolutions=[resolution(X, "YES", at=day(4))],
        offers=[offer(X, 0, 0.5), offer(X, 2, 0.7)],
        forecasts=[statement("c", X, 0.9, day(2))],
    )
    event = imputed_event_scores(world).row(0, named=True)
    assert (event["rounds"], event["imputed"]) == (2, 1)
    assert event["brier"] == pytest.approx(0.13)


def test_imputed_brier_log_share_and_autocast_by_hand() -> None:
    a, b = _by_agent()["a"], _by_agent()["b"]
    # a, per event (mean over the rounds offered): X (0.6−1)² = .16 both rounds; Y imputed
    # (0.4−0)² = .16 and (0.2−0)² = .04 → .10; M: A (0.1−0)² = .01, B (0.8−1)² = .04, C .01.
    assert a["stated_brier_imputed"] == pytest.approx((0.16 + 0.10 + 0.01 + 0.04 + 0.01) / 5)  # 0.064
    assert a["imputed_events"] == 5
    assert a["imputed_share"] == pytest.approx(2 / 7)  # 7 (round, event) rows, the 2 of Y imputed
    log_a = [math.log(0.6), (math.log(0.6) + math.log(0.8)) / 2, math.log(0.9), math.log(0.8), math.log(0.9)]
    assert a["log_score_imputed"] == pytest.approx(sum(log_a) / 5)
    # b states nothing: all market prices. X: (.5−1)² = .25, (.7−1)² = .09 → .17; Y .10;
    # M: A .2² = .04, B .5² = .25, C .3² = .09.
    assert b["stated_brier_imputed"] == pytest.approx((0.17 + 0.10 + 0.04 + 0.25 + 0.09) / 5)  # 0.13
    assert b["imputed_share"] == 1.0
    # Autocast: binary = the Brier (YES and NO terms equal: 2 × .16 / 2); M = (.01 + .04 + .01) / 2.
    assert a["stated_brier_autocast"] == pytest.approx((0.16 + 0.10 + 0.03) / 3)
    # b's M: (.04 + .25 + .09) / 2 = .19.
    assert b["stated_brier_autocast"] == pytest.approx((0.17 + 0.10 + 0.19) / 3)


def test_autocast_brier_of_a_binary_market_equals_its_brier() -> None:
    only_binary = build(
        agents=[seat("a")],
        resolutions=[resolution(X, "YES", at=day(4))],
        offers=[offer(X, 0, 0.5), offer(X, 2, 0.7)],
        forecasts=[statement("a", X, 0.6, day(0))],
    )
    a = point_estimates(inputs(only_binary)).row(0, named=True)
    # The full two-outcome sum is (0.6 − 1)² + (0.4 − 0)² = .32; halved, .16 = (0.6 − 1)².
    assert a["stated_brier_autocast"] == pytest.approx(0.16) == a["stated_brier_imputed"]


def test_unresolved_markets_are_scored_apart_against_the_latest_price() -> None:
    a, b = _by_agent()["a"], _by_agent()["b"]
    # Z is open: a's 0.9 against the latest price 0.8 → (0.9 − 0.8)² = .01, never in the resolved scores.
    assert (a["provisional_events"], a["stated_brier_provisional"]) == (1, pytest.approx(0.01))
    assert (b["provisional_events"], b["stated_brier_provisional"]) == (0, None)


def test_leaderboard_ranks_by_the_imputed_reading_and_compares_with_the_leader() -> None:
    table = leaderboard(_world(), by="stated_brier_imputed", replicates=200)
    assert table["agent"].to_list() == ["a", "b"]  # 0.064 < 0.13
    a, b = table.row(0, named=True), table.row(1, named=True)
    # As stated: a on X (.16 over days 0–4) and M (.01, .04, .01): .055; b stated nothing.
    assert a["stated_brier"] == pytest.approx(0.22 / 4)
    assert b["vs_leader_stated_brier_imputed_diff"] == pytest.approx(0.13 - 0.064)
    assert b["vs_leader_stated_brier_imputed_common_markets"] == 3  # X, Y, M
    assert b["vs_leader_stated_brier_imputed_few_markets"] is True
    assert 0 < b["vs_leader_stated_brier_imputed_p_value"] <= 1
    # Markets where b beats a: X no (.17 vs .16), M no (.38/3 vs .06/3), Y a tie (.10 each, ½) → ½ / 3.
    assert b["vs_leader_stated_brier_imputed_share_better"] == pytest.approx(0.5 / 3)
    assert a["stated_brier_imputed_lo"] <= 0.064 <= a["stated_brier_imputed_hi"]
    assert b["vs_leader_stated_brier_common_markets"] == 0  # b stated nothing: no common market
    assert a["vs_leader_stated_brier_imputed_diff"] is None  # the leader is not compared with itself


def test_an_unstated_outcome_of_a_multi_outcome_market_takes_its_price() -> None:
    """d states A 0.1 and B 0.8 on M, not C (price 0.3); B wins. Events: A .01, B .04, C .09 (imputed).
    Autocast: (.01 + .04 + .09) / 2 = .07."""
    world = build(
        agents=[seat("d")],
        resolutions=[resolution(M, "OUTCOME", winner="B", at=day(4))],
        offers=[offer(M, 0, p, o) for o, p in (("A", 0.2), ("B", 0.5), ("C", 0.3))],
        forecasts=[statement("d", M, p, day(0), outcome=o) for o, p in (("A", 0.1), ("B", 0.8))],
    )
    d = point_estimates(inputs(world)).row(0, named=True)
    assert d["imputed_share"] == pytest.approx(1 / 3)
    assert d["stated_brier_imputed"] == pytest.approx((0.01 + 0.04 + 0.09) / 3)
    assert d["stated_brier_autocast"] == pytest.approx(0.07)
