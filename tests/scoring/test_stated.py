"""Stated probabilities: time-weighted scores and coverage of each event, by hand."""

from __future__ import annotations

import math

import pytest

from arena.scoring.board.ranking import point_estimates
from arena.scoring.board.tables import calibration_summary
from arena.scoring.rules.stated import event_scores, standing_forecasts
from tests.scoring.builders import build, day, inputs, price, resolution, seat, statement

X, Y, VOID = "polymarket:x", "polymarket:y", "polymarket:void"


def _world():
    """Market x: YES at 0.5 (day 0) then 0.7 (day 2), resolves YES on day 4.
    Market y: YES at 0.4 (day 0), resolves NO on day 4. A voided market is ignored.

    a states x: 0.6 on day 0, 0.8 on day 2; y: 0.3 on day 1 (and once more after resolution).
    b states x: 0.9 on day 3 only. m restates the market price of x at each observation.
    """
    return build(
        agents=[seat("a"), seat("b"), seat("m", kind="baseline")],
        resolutions=[
            resolution(X, "YES", at=day(4)),
            resolution(Y, "NO", at=day(4)),
            resolution(VOID, "VOID", at=day(4)),
        ],
        prices=[price(X, day(0), 0.5), price(X, day(2), 0.7), price(Y, day(0), 0.4)],
        forecasts=[
            statement("a", X, 0.6, day(0)),
            statement("a", X, 0.8, day(2)),
            statement("a", Y, 0.3, day(1)),
            statement("a", Y, 0.01, day(5)),  # after resolution: never stood
            statement("a", VOID, 0.9, day(0)),
            statement("b", X, 0.9, day(3)),
            statement("m", X, 0.5, day(0)),
            statement("m", X, 0.7, day(2)),
        ],
    )


def test_statements_stand_until_the_next_or_resolution() -> None:
    standing = standing_forecasts(_world()).sort("agent", "market_id", "stated_at")
    a_x = standing.filter((standing["agent"] == "a") & (standing["market_id"] == X))
    assert a_x["duration_s"].to_list() == [2 * 86_400.0, 2 * 86_400.0]
    assert a_x["weight"].to_list() == [0.5, 0.5]
    assert a_x["m"].to_list() == [0.5, 0.7]
    b_x = standing.filter(standing["agent"] == "b")
    assert (b_x["duration_s"].to_list(), b_x["m"].to_list()) == ([86_400.0], [0.7])  # latest price ≤ day 3
    assert set(standing["market_id"]) == {X, Y}  # void and post-resolution statements never stand


def test_event_scores_by_hand() -> None:
    events = {
        (r["agent"], r["market_id"]): r
        for r in event_scores(standing_forecasts(_world())).iter_rows(named=True)
    }
    a_x, a_y, b_x, m_x = events["a", X], events["a", Y], events["b", X], events["m", X]
    # a on x: 2 days at 0.6, 2 days at 0.8, YES happened.
    assert a_x["brier"] == pytest.approx((0.4**2 + 0.2**2) / 2)
    assert a_x["log_score"] == pytest.approx((math.log(0.6) + math.log(0.8)) / 2)
    assert a_x["rel_log_score"] == pytest.approx((math.log(0.6 / 0.5) + math.log(0.8 / 0.7)) / 2)
    assert a_x["coverage"] == pytest.approx(1.0)
    # a on y: YES at 0.3 from day 1 (first statement of anyone on y) to day 4; NO happened.
    assert (a_y["brier"], a_y["log_score"]) == (pytest.approx(0.09), pytest.approx(math.log(0.7)))
    assert a_y["rel_log_score"] == pytest.approx(math.log(0.7 / 0.6))
    assert a_y["coverage"] == pytest.approx(1.0)
    # b on x: 1 day of the 4 the market was open to the cohort (a stated first on day 0).
    assert b_x["coverage"] == pytest.approx(0.25)
    assert b_x["rel_log_score"] == pytest.approx(math.log(0.9 / 0.7))
    # Restating the market is exactly as good as the market.
    assert m_x["rel_log_score"] == pytest.approx(0.0, abs=1e-15)


def test_agent_means() -> None:
    frames = _world()
    table = point_estimates(inputs(frames))
    got = {r["agent"]: r for r in table.iter_rows(named=True)}
    rel_a = ((math.log(1.2) + math.log(0.8 / 0.7)) / 2 + math.log(0.7 / 0.6)) / 2
    assert got["a"]["stated_events"] == 2
    assert got["a"]["stated_brier"] == pytest.approx((0.10 + 0.09) / 2)
    assert got["a"]["rel_log_score"] == pytest.approx(rel_a)
    assert got["b"]["stated_events"] == 1


def test_relative_score_only_over_time_with_a_known_price() -> None:
    # The market's first price comes on day 2: a's first 2 days have no market to compare with.
    frames = build(
        agents=[seat("a")],
        resolutions=[resolution(X, "YES", at=day(4)), resolution(Y, "YES", at=day(4))],
        prices=[price(X, day(2), 0.5)],
        forecasts=[
            statement("a", X, 0.6, day(0)),
            statement("a", X, 0.8, day(2)),
            statement("a", Y, 0.5, day(0)),
        ],
    )
    events = {r["market_id"]: r for r in event_scores(standing_forecasts(frames)).iter_rows(named=True)}
    assert events[X]["rel_log_score"] == pytest.approx(math.log(0.8 / 0.5))
    assert events[X]["log_score"] == pytest.approx((math.log(0.6) + math.log(0.8)) / 2)
    assert events[Y]["rel_log_score"] is None  # never priced: no relative score, not 0 and not NaN


def test_stated_calibration_weights_reproduce_the_stated_brier() -> None:
    # Each statement weighs its share of the event's standing time, so the calibration's Brier is
    # the mean over events of the time-weighted Brier: for a, (0.10 + 0.09) / 2.
    summary = {r["agent"]: r for r in calibration_summary(_world(), "stated").iter_rows(named=True)}
    assert summary["a"]["brier"] == pytest.approx(0.095)
    assert summary["m"]["brier"] == pytest.approx((0.5**2 + 0.3**2) / 2)


def test_coverage_runs_from_the_markets_first_round_not_from_the_first_statement() -> None:
    # x was offered to the cohort from day 0; a, the only forecaster, states it on day 3 only.
    # Without the listing a would seem to cover all of x's open time; with it, 1 day of 4.
    listed = {"cohort_id": "c1", "market_id": X, "listed_at": day(0)}
    rows = {
        "agents": [seat("a")],
        "resolutions": [resolution(X, "YES", at=day(4))],
        "prices": [price(X, day(0), 0.5)],
        "forecasts": [statement("a", X, 0.9, day(3))],
    }
    late = event_scores(standing_forecasts(build(**rows, listings=[listed]))).row(0, named=True)
    assert late["coverage"] == pytest.approx(0.25)
    unlisted = event_scores(standing_forecasts(build(**rows))).row(0, named=True)
    assert unlisted["coverage"] == pytest.approx(1.0)  # the fallback: from the first statement
    # A listing after the first statement (a held market not in the snapshot) never shortens it.
    early = {**listed, "listed_at": day(3.5)}
    assert event_scores(standing_forecasts(build(**rows, listings=[early])))["coverage"].item() == 1.0
