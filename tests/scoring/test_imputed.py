"""Complete stated readings by hand: imputation at the market price (0.5 where the round hid it),
only for agents that take part, each market weighing once; provisional scores on open markets,
the Autocast-normalised Brier, and their intervals and comparisons with the leader."""

from __future__ import annotations

import math

import pytest

from arena.scoring import leaderboard
from arena.scoring.board.ranking import point_estimates
from arena.scoring.rules.imputed import imputed_event_scores, resolved_offers, stated_offers
from tests.scoring.builders import Row, build, day, inputs, price, resolution, seat, statement

X, Y, Z, M = "polymarket:x", "polymarket:y", "polymarket:z", "polymarket:m"


def offer(
    market: str, at: float, p: float, outcome: str = "YES", cohort: str = "c1", *, shown: bool = True
) -> Row:
    return {
        "cohort_id": cohort,
        "market_id": market,
        "outcome": outcome,
        "offered_at": day(at),
        "price": p,
        "shown": shown,
    }


def _world():
    """Rounds on day 0 and day 2 offer X (YES 0.5, then 0.7) and Y (YES 0.4, then 0.2); day 0
    also offers Z (never resolves; last price 0.8 on day 3) and M, outcomes A/B/C at 0.2/0.5/0.3.
    X resolves YES, Y NO, M B, all on day 4.

    a states X 0.6 and M (A 0.1, B 0.8, C 0.1) on day 0, and Z 0.9; it never states Y.
    e states X 0.8 on day 0 and nothing else.
    b states nothing: it takes no part.
    """
    return build(
        agents=[seat("a"), seat("b"), seat("e")],
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
            statement("e", X, 0.8, day(0)),
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
    a, e = _by_agent()["a"], _by_agent()["e"]
    # a, per event (mean over the rounds offered): X (0.6−1)² = .16 both rounds; Y imputed
    # (0.4−0)² = .16 and (0.2−0)² = .04 → .10; M: A (0.1−0)² = .01, B (0.8−1)² = .04, C .01.
    # Each market weighs once: M's three outcomes share one weight, (.01 + .04 + .01) / 3 = .02.
    assert a["stated_brier_imputed"] == pytest.approx((0.16 + 0.10 + 0.02) / 3)  # 0.0933
    assert a["imputed_events"] == 5
    assert a["imputed_share"] == pytest.approx(2 / 7)  # 7 (round, event) rows, the 2 of Y imputed
    m_log = (math.log(0.9) + math.log(0.8) + math.log(0.9)) / 3
    log_a = [math.log(0.6), (math.log(0.6) + math.log(0.8)) / 2, m_log]
    assert a["log_score_imputed"] == pytest.approx(sum(log_a) / 3)
    # e: X (0.8−1)² = .04 both rounds; Y imputed .10; M imputed, A .2² = .04, B .5² = .25, C .3² = .09.
    assert e["stated_brier_imputed"] == pytest.approx((0.04 + 0.10 + 0.38 / 3) / 3)  # 0.0889
    assert e["imputed_share"] == pytest.approx(5 / 7)
    # Autocast: binary = the Brier (YES and NO terms equal: 2 × .16 / 2); M = (.01 + .04 + .01) / 2.
    assert a["stated_brier_autocast"] == pytest.approx((0.16 + 0.10 + 0.03) / 3)
    # e's M: (.04 + .25 + .09) / 2 = .19.
    assert e["stated_brier_autocast"] == pytest.approx((0.04 + 0.10 + 0.19) / 3)


def test_an_agent_that_never_stated_has_no_stated_score() -> None:
    """b stated nothing: a fully imputed b would score the market's 0.13 and tie any other
    abstainer; it takes no part, so it has no stated score at all."""
    b = _by_agent()["b"]
    assert (b["stated_brier_imputed"], b["log_score_imputed"], b["stated_brier_autocast"]) == (None,) * 3
    assert (b["imputed_share"], b["imputed_events"]) == (None, 0)
    assert b["stated_brier"] is None and b["stated_events"] == 0


def test_taking_part_is_judged_per_cohort() -> None:
    """p states X in cohort c1 only; in c2 (offered X too) it said nothing: only c1's events count.
    c1: X 0.9 both rounds, (0.9 − 1)² = .01; c2's X would have been imputed at .25."""
    world = build(
        agents=[seat("p"), seat("p", cohort="c2")],
        resolutions=[resolution(X, "YES", at=day(4))],
        offers=[offer(X, 0, 0.5), offer(X, 2, 0.5), offer(X, 0, 0.5, cohort="c2")],
        forecasts=[statement("p", X, 0.9, day(0))],
    )
    events = imputed_event_scores(world)
    assert events.select("cohort_id", "agent", "market_id").rows() == [("c1", "p", X)]
    assert events["brier"].item() == pytest.approx(0.01)


def test_a_silent_agent_in_a_hidden_round_takes_half_not_the_hidden_price() -> None:
    """X's day-0 round hid its price (0.8); s states X 0.9 on day 2 only; X resolves YES. Day 0 is
    imputed at 0.5, what s could see (the Metaculus rules' ignorance prior): (0.5 − 1)² = .25, not
    (0.8 − 1)² = .04. Day 2: (0.9 − 1)² = .01. X: (.25 + .01) / 2 = .13. Y, never stated, hidden
    on day 0 (0.3) and shown on day 2 (0.2), resolves NO: (.5² + .2²) / 2 = .145."""
    world = build(
        agents=[seat("s")],
        resolutions=[resolution(X, "YES", at=day(4)), resolution(Y, "NO", at=day(4))],
        offers=[
            offer(X, 0, 0.8, shown=False),
            offer(X, 2, 0.7),
            offer(Y, 0, 0.3, shown=False),
            offer(Y, 2, 0.2),
        ],
        forecasts=[statement("s", X, 0.9, day(2))],
    )
    events = {r["market_id"]: r for r in imputed_event_scores(world).iter_rows(named=True)}
    assert events[X]["brier"] == pytest.approx(0.13) and events[X]["imputed"] == 1
    assert events[Y]["brier"] == pytest.approx(0.145) and events[Y]["imputed"] == 2
    s = point_estimates(inputs(world)).row(0, named=True)
    assert s["stated_brier_imputed"] == pytest.approx((0.13 + 0.145) / 2)


def test_a_hidden_multi_outcome_round_takes_one_over_n() -> None:
    """M (A, B, C; B wins) is hidden in its only round; d states Y there, never M: each outcome is
    imputed 1/3: A (1/3)², B (2/3)², C (1/3)²; one market, so their mean, 6/27 = .2222."""
    world = build(
        agents=[seat("d")],
        resolutions=[resolution(M, "OUTCOME", winner="B", at=day(4)), resolution(Y, "NO", at=day(4))],
        offers=[
            *(offer(M, 0, p, o, shown=False) for o, p in (("A", 0.2), ("B", 0.5), ("C", 0.3))),
            offer(Y, 0, 0.4),
        ],
        forecasts=[statement("d", Y, 0.1, day(0))],
    )
    events = imputed_event_scores(world).filter(market_id=M)
    assert events["brier"].to_list() == pytest.approx([1 / 9, 4 / 9, 1 / 9])
    d = point_estimates(inputs(world)).row(0, named=True)
    assert d["stated_brier_imputed"] == pytest.approx((6 / 27 + 0.01) / 2)


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
    assert table["agent"].to_list() == ["e", "a", "b"]  # 0.0889 < 0.0933; b has no stated score
    e, a, b = (table.row(i, named=True) for i in range(3))
    assert b["rank"] is None and b["vs_leader_stated_brier_imputed_diff"] is None
    # As stated: a on X (.16 over days 0–4) and M (.01, .04, .01: one market, .02): (.16 + .02) / 2.
    assert a["stated_brier"] == pytest.approx(0.09)
    assert a["vs_leader_stated_brier_imputed_diff"] == pytest.approx(0.28 / 3 - 0.80 / 9)
    assert a["vs_leader_stated_brier_imputed_common_markets"] == 3  # X, Y, M
    assert a["vs_leader_stated_brier_imputed_few_markets"] is True
    # Three markets are too few for a p-value: none, and the reason.
    assert a["vs_leader_stated_brier_imputed_p_value"] is None
    assert a["vs_leader_stated_brier_imputed_p_value_reason"] == "fewer than 30 common resolved markets"
    # Markets where a beats e: X no (.16 vs .04), Y a tie (both imputed .10), M yes (.02 vs .127).
    wins = [a[f"vs_leader_stated_brier_imputed_{k}"] for k in ("wins", "ties", "losses")]
    assert wins == [1, 1, 1] and a["vs_leader_stated_brier_imputed_share_better"] == pytest.approx(1 / 3)
    assert e["stated_brier_imputed_lo"] <= 0.80 / 9 <= e["stated_brier_imputed_hi"]
    assert e["vs_leader_stated_brier_imputed_diff"] is None  # the leader is not compared with itself
    assert e["vs_leader_stated_brier_imputed_p_value_reason"] is None


def test_an_unstated_outcome_of_a_multi_outcome_market_takes_its_price() -> None:
    """d states A 0.1 and B 0.8 on M, not C (price 0.3); B wins. Events: A .01, B .04, C .09
    (imputed), one market: (.01 + .04 + .09) / 3. Autocast: (.01 + .04 + .09) / 2 = .07."""
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


def test_an_agent_that_states_selectively_is_flagged_and_ranks_below_on_as_stated_scores() -> None:
    """Rounds on days 0 and 2 show X (0.5, 0.7; YES) and Y (0.4, 0.2; NO). sure states X 0.95 on
    day 2 only: no forecast on X day 0, Y days 0 and 2: 3 of the 4 shown events unstated, 75%
    (flagged above 10%). Its as-stated Brier (0.95 − 1)² = .0025 beats full's, which states X 0.6
    and Y 0.3 on day 0 ((.16 + .09) / 2 = .125), but a selective agent ranks below the others."""
    world = build(
        agents=[seat("sure"), seat("full")],
        resolutions=[resolution(X, "YES", at=day(4)), resolution(Y, "NO", at=day(4))],
        offers=[offer(X, 0, 0.5), offer(X, 2, 0.7), offer(Y, 0, 0.4), offer(Y, 2, 0.2)],
        forecasts=[
            statement("sure", X, 0.95, day(2)),
            statement("full", X, 0.6, day(0)),
            statement("full", Y, 0.3, day(0)),
        ],
    )
    table = leaderboard(world, by="stated_brier", replicates=50)
    got = {r["agent"]: r for r in table.iter_rows(named=True)}
    assert got["sure"]["stated_brier"] == pytest.approx(0.0025) and got["full"][
        "stated_brier"
    ] == pytest.approx(0.125)
    assert (got["sure"]["unstated_share"], got["sure"]["stated_selective"]) == (0.75, True)
    assert (got["full"]["unstated_share"], got["full"]["stated_selective"]) == (0.0, False)
    assert table.select("agent", "rank").rows() == [("full", 1), ("sure", 2)]
    # The imputed reading needs no demotion: it scores sure on everything offered, the price where it
    # said nothing. X: (.25 + .0025) / 2, Y: (.16 + .04) / 2 → .113; full .125: sure leads honestly.
    by_imputed = leaderboard(world, by="stated_brier_imputed", replicates=50)
    assert by_imputed["agent"].to_list() == ["sure", "full"]
    assert by_imputed["stated_brier_imputed"][0] == pytest.approx((0.12625 + 0.10) / 2)


def test_an_agent_that_states_the_hidden_price_is_flagged() -> None:
    """Five rounds hide X's price (0.41, 0.43, 0.47, 0.52, 0.55; X resolves NO). peek states
    exactly that price each round, though it was shown none: 5 of 5 (flagged from 50%, at least 5).
    blind states 0.5 each round: never a hidden price, 0 of 5.
    peek's imputed Brier beats blind's, yet it ranks below: its standing says nothing."""
    prices = (0.41, 0.43, 0.47, 0.52, 0.55)
    world = build(
        agents=[seat("peek"), seat("blind")],
        resolutions=[resolution(X, "NO", at=day(10))],
        offers=[offer(X, d, p, shown=False) for d, p in enumerate(prices)],
        forecasts=[statement("peek", X, p, day(d)) for d, p in enumerate(prices)]
        + [statement("blind", X, 0.5, day(d)) for d in range(5)],
    )
    table = leaderboard(world, by="stated_brier_imputed", replicates=50)
    got = {r["agent"]: r for r in table.iter_rows(named=True)}
    assert (got["peek"]["hidden_price_share"], got["peek"]["hidden_price_seen"]) == (1.0, True)
    assert (got["blind"]["hidden_price_share"], got["blind"]["hidden_price_seen"]) == (0.0, False)
    brier_peek = sum(p**2 for p in prices) / 5  # .229
    assert got["peek"]["stated_brier_imputed"] == pytest.approx(brier_peek)
    assert brier_peek < got["blind"]["stated_brier_imputed"] == pytest.approx(0.25)
    assert table.select("agent", "rank").rows() == [("blind", 1), ("peek", 2)]
