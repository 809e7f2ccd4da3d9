"""Metaculus tournament scoring on Metaculus's own example (its tournament rules), worked out by hand.

The example's days are unit intervals: day 1 is [0, 1), ..., day 4 is [3, 4). Each question is
open 4 days, its median hidden for the first 2 (hidden_fraction 0.5); with s_weight = c_weight =
0.5 every day weighs 25%, as in the example's tables.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.tournament import lone_covered, split_prizes, tournament_standings
from tests.scoring.builders import build, day, price, resolution, seat, statement, window

Q1, Q3 = "polymarket:tokyo", "polymarket:spx"


def _settings(reference: str = "cohort_median", s_weight: float = 0.5, c_weight: float = 0.5) -> dict:
    return {
        "cohort_id": "c1",
        "prize_pool": 1000.0,
        "reference": reference,
        "s_weight": s_weight,
        "c_weight": c_weight,
    }


def _question_1(**settings: object) -> ScoringFrames:
    """Q1 "Tokyo Olympics in 2021?", resolved Yes after day 4. Daily forecasts as in the example:

    A: 10% (days 1–2), 55% (days 3–4); B: 90% from day 2; C: 20%, 25%, 30%, 35%;
    the bot (a baseline) copies the median, 55%, on days 3–4 when it is visible.
    Median of the non-baseline forecasts standing: day 1 median(10, 20) = 15% (the example's
    figure), day 2 median(10, 90, 25) = 25%, days 3–4 median(55, 90, 30 | 35) = 55% (the example's).
    """
    forecasts = [
        statement("A", Q1, 0.10, day(0)),
        statement("A", Q1, 0.55, day(2)),
        statement("B", Q1, 0.90, day(1)),
        *(statement("C", Q1, p, day(d)) for d, p in enumerate((0.20, 0.25, 0.30, 0.35))),
        statement("bot", Q1, 0.55, day(2)),
    ]
    return build(
        agents=[seat("A"), seat("B"), seat("C"), seat("bot", kind="baseline")],
        resolutions=[resolution(Q1, "YES", at=day(4))],
        forecasts=forecasts,
        windows=[window(Q1, 0, 4, hidden_until=2)],
        tournaments=[_settings(**settings)],  # type: ignore[arg-type]
    )


def _by_agent(frames: ScoringFrames) -> dict[str, dict]:
    return {r["agent"]: r for r in tournament_standings(frames).iter_rows(named=True)}


def test_metaculus_example_log_ratio_of_one_forecast() -> None:
    """A's day-1 forecast 10% against a median of 15%: log(0.10 / 0.15) = −0.41 (the example's)."""
    frames = build(
        agents=[seat("A")],
        resolutions=[resolution(Q1, "YES", at=day(5))],
        prices=[price(Q1, day(0), 0.15)],
        forecasts=[statement("A", Q1, 0.10, day(0))],
        windows=[window(Q1, 0, 1)],
    )
    a = _by_agent(frames)["A"]
    assert a["tournament_score"] == pytest.approx(math.log(0.10 / 0.15))
    assert round(a["tournament_score"], 2) == -0.41
    assert a["coverage"] == 1.0


def test_metaculus_example_question_1_scores_and_coverage() -> None:
    """s1 = mean over the 4 days of log(f/m), silent days 0:

    B: (0 + ln(0.90/0.25) + 2·ln(0.90/0.55)) / 4 = (1.2809 + 2·0.4925) / 4 = 0.566 (the example's s1 for B);
    A: (ln(0.10/0.15) + ln(0.10/0.25) + 0 + 0) / 4 = (−0.4055 − 0.9163) / 4 = −0.330;
    C: (ln(0.20/0.15) + ln(0.25/0.25) + ln(0.30/0.55) + ln(0.35/0.55)) / 4 = −0.193;
    the bot restates the median: 0. Coverage: A and C 100%, B 75%, the bot 50% (the example's).
    """
    got = _by_agent(_question_1())
    s_b = (math.log(0.90 / 0.25) + 2 * math.log(0.90 / 0.55)) / 4
    assert got["B"]["tournament_score"] == pytest.approx(s_b)
    assert round(s_b, 3) == 0.566
    assert got["A"]["tournament_score"] == pytest.approx((math.log(0.10 / 0.15) + math.log(0.10 / 0.25)) / 4)
    s_c = (math.log(0.20 / 0.15) + 0 + math.log(0.30 / 0.55) + math.log(0.35 / 0.55)) / 4
    assert got["C"]["tournament_score"] == pytest.approx(s_c)
    assert got["bot"]["tournament_score"] == pytest.approx(0.0, abs=1e-12)
    assert [got[a]["coverage"] for a in ("A", "B", "C", "bot")] == pytest.approx([1.0, 0.75, 1.0, 0.5])


def test_c_weight_1_leaves_the_bot_nothing() -> None:
    """c_weight = 100%: coverage is decided in the hidden days only, where the bot never forecasts,
    so its coverage, S and prize are exactly 0 (the example's "Battling the Bot"). B covered 1 of the
    2 hidden days: 50%."""
    got = _by_agent(_question_1(c_weight=1.0))
    assert (got["bot"]["coverage"], got["bot"]["tournament_take"], got["bot"]["tournament_prize"]) == (
        0,
        0,
        0,
    )
    assert got["B"]["coverage"] == pytest.approx(0.5)


def test_s_weight_1_scores_only_the_hidden_period() -> None:
    """s_weight = 100%: B's score is its hidden-period mean, (0 + ln(0.90/0.25)) / 2."""
    got = _by_agent(_question_1(s_weight=1.0))
    assert got["B"]["tournament_score"] == pytest.approx(math.log(0.90 / 0.25) / 2)


def test_an_early_close_counts_0_for_the_rest_of_the_window() -> None:
    """Q3 "S&P above 4500 by Friday?" resolves Yes at the end of day 3, one day early. B forecasts
    10% from day 2 against a market at 20%: s3 = (0 + 2·ln(0.10/0.20) + 0) / 4 = −0.347 (averaging over
    the 3 days would give −0.462); coverage (days 2–3) 2/4 = 50%; C never forecasts: 0 and 0%."""
    frames = build(
        agents=[seat("B"), seat("C")],
        resolutions=[resolution(Q3, "YES", at=day(3))],
        prices=[price(Q3, day(0), 0.20)],
        forecasts=[statement("B", Q3, 0.10, day(1)), statement("B", Q3, 0.05, day(3))],  # after the close
        windows=[window(Q3, 0, 4, hidden_until=2)],
        tournaments=[_settings(reference="market")],
    )
    got = _by_agent(frames)
    assert got["B"]["tournament_score"] == pytest.approx(2 * math.log(0.5) / 4)
    assert got["B"]["coverage"] == pytest.approx(0.5)
    assert (got["C"]["tournament_score"], got["C"]["coverage"]) == (0.0, 0.0)


def test_scores_sum_and_coverage_averages_over_all_questions() -> None:
    """Two questions of one day each against the market: A states 0.6 on x (YES, market 0.5) and
    0.3 on y (NO, market 0.4): s = ln(0.6/0.5) + ln(0.7/0.6), a sum, not a mean. B states only x:
    coverage 1/2 (y counts 0 though B never touched it)."""
    x, y = "polymarket:x", "polymarket:y"
    frames = build(
        agents=[seat("A"), seat("B")],
        resolutions=[resolution(x, "YES", at=day(1)), resolution(y, "NO", at=day(1))],
        prices=[price(x, day(0), 0.5), price(y, day(0), 0.4)],
        forecasts=[
            statement("A", x, 0.6, day(0)),
            statement("A", y, 0.3, day(0)),
            statement("B", x, 0.5, day(0)),
        ],
        windows=[window(x, 0, 1), window(y, 0, 1)],
    )
    got = _by_agent(frames)
    assert got["A"]["tournament_score"] == pytest.approx(math.log(0.6 / 0.5) + math.log(0.7 / 0.6))
    assert (got["A"]["coverage"], got["B"]["coverage"]) == (1.0, 0.5)


def test_metaculus_example_take_and_prizes() -> None:
    """The example's leaderboard: B has S = 4.78 of ΣS = 6.14, take 4.78 / 6.14 ≈ 78%, prize $779.
    B's coverage from the example's tables: Q1 75%, Q2 100%, Q3 50% → c = 0.75, so s = ln(4.78/0.75).
    The bot: s = 0, coverage Q1 50%, Q2 50%, Q3 25% (day 3 only) → c = 5/12, S = 0.4167 → $68.
    A and C hold the rest of ΣS, 6.14 − 4.78 − 0.4167 (their split does not change the others)."""
    rest = 6.14 - 4.78 - 5 / 12
    standings = pl.DataFrame(
        {
            "agent": ["A+C", "B", "bot"],
            "tournament_score": [0.0, math.log(4.78 / 0.75), 0.0],
            "coverage": [rest, 0.75, 5 / 12],
        }
    )
    got = {r["agent"]: r for r in split_prizes(standings, 1000.0).iter_rows(named=True)}
    assert got["B"]["tournament_take"] == pytest.approx(4.78 / 6.14)
    assert round(got["B"]["tournament_take"], 2) == 0.78 and round(got["B"]["tournament_prize"]) == 779
    assert round(got["bot"]["tournament_prize"]) == 68
    assert sum(r["tournament_prize"] for r in got.values()) == pytest.approx(1000.0)


def test_nothing_to_split() -> None:
    """No question yet: every column null. Questions but nobody forecast: s = c = 0, no take."""
    idle = build(agents=[seat("quiet")], resolutions=[resolution(Q1, "YES")])
    assert _by_agent(idle)["quiet"] == {
        "agent": "quiet",
        "tournament_score": None,
        "coverage": None,
        "tournament_take": None,
        "tournament_prize": None,
    }
    silent = build(
        agents=[seat("quiet")], resolutions=[resolution(Q1, "YES", at=day(1))], windows=[window(Q1, 0, 1)]
    )
    row = _by_agent(silent)["quiet"]
    assert (row["tournament_score"], row["coverage"], row["tournament_take"]) == (0.0, 0.0, None)


def test_void_and_unresolved_markets_are_not_questions() -> None:
    """Only resolved, non-void markets are questions: A's coverage is 1 of 1, not 1 of 3."""
    void, open_ = "polymarket:void", "polymarket:open"
    frames = build(
        agents=[seat("A")],
        resolutions=[resolution(Q1, "YES", at=day(1)), resolution(void, "VOID", at=day(1))],
        prices=[price(Q1, day(0), 0.5)],
        forecasts=[statement("A", Q1, 0.5, day(0))],
        windows=[window(Q1, 0, 1), window(void, 0, 1), window(open_, 0, 1)],
    )
    assert _by_agent(frames)["A"]["coverage"] == 1.0


def test_cohorts_pool_their_questions_and_prize_pools() -> None:
    """Agent A in two cohorts (pools $1,000 and $500), one question each; B only in c2.
    A: s = ln(0.8/0.5) + ln(0.5/0.5), c = 2/2; B silent on c2's question: c = 0. A alone covers the
    pooled $1,500: it is paid against the reference, S / (S + 1) = 1.6 / 2.6 of it."""
    x, y = "polymarket:x", "polymarket:y"
    frames = build(
        agents=[seat("A"), seat("A", cohort="c2"), seat("B", cohort="c2")],
        resolutions=[resolution(x, "YES", at=day(1)), resolution(y, "YES", at=day(1))],
        prices=[price(x, day(0), 0.5), price(y, day(0), 0.5)],
        forecasts=[statement("A", x, 0.8, day(0)), statement("A", y, 0.5, day(0), cohort="c2")],
        windows=[window(x, 0, 1), window(y, 0, 1, cohort="c2")],
        tournaments=[
            _settings(reference="market"),
            {**_settings(reference="market"), "cohort_id": "c2", "prize_pool": 500.0},
        ],
    )
    got = _by_agent(frames)
    assert (got["A"]["tournament_score"], got["A"]["coverage"]) == (pytest.approx(math.log(1.6)), 1.0)
    assert (got["A"]["tournament_prize"], got["B"]["coverage"], got["B"]["tournament_prize"]) == (
        pytest.approx(1500.0 * 1.6 / 2.6),
        0.0,
        0.0,
    )


def _clip(v: float) -> float:
    return min(max(v, 1e-3), 1 - 1e-3)


def _direct(frames: ScoringFrames) -> dict[str, tuple[float, float]]:
    """s and c per agent by the definition, piece by piece: between consecutive instants where
    anything changes, each agent's forecast and the reference are constant (binary YES/NO only)."""
    settings = frames.tournaments.row(0, named=True)
    totals = {a: [0.0, 0.0] for a in frames.agents["agent"]}
    baseline = dict(frames.agents.select("agent", "baseline").iter_rows())
    windows = frames.windows.iter_rows(named=True)
    for w in windows:
        res = frames.resolutions.filter(pl.col("market_id") == w["market_id"]).row(0, named=True)
        y = 1.0 if res["kind"] == "YES" else 0.0
        end = min(w["closes_at"], res["resolved_at"])
        said = frames.forecasts.filter(pl.col("market_id") == w["market_id"]).sort("stated_at")
        seen = frames.prices.filter(pl.col("market_id") == w["market_id"]).sort("observed_at")
        cuts = {w["opens_at"], w["hidden_until"], end, *said["stated_at"], *seen["observed_at"]}
        cuts = sorted(t for t in cuts if w["opens_at"] <= t <= end)
        hidden = (w["hidden_until"] - w["opens_at"]).total_seconds()
        visible = (w["closes_at"] - w["hidden_until"]).total_seconds()
        for t, nxt in itertools.pairwise(cuts):
            d = (nxt - t).total_seconds()
            share = "hidden" if t < w["hidden_until"] else "visible"
            rate = {
                k: (settings[k] / hidden if share == "hidden" else (1 - settings[k]) / visible)
                for k in ("s_weight", "c_weight")
            }
            standing = {
                a: ps[-1]
                for a in totals
                if (ps := said.filter((pl.col("agent") == a) & (pl.col("stated_at") <= t))["p"].to_list())
            }
            if settings["reference"] == "market":
                m = (seen.filter(pl.col("observed_at") <= t)["price"].to_list() or [None])[-1]
            else:
                others = sorted(p for a, p in standing.items() if not baseline[a])
                m = float(np.median(others)) if others else None
            for agent, p in standing.items():
                if m is not None:
                    gain = y * math.log(_clip(p) / _clip(m)) + (1 - y) * math.log(
                        (1 - _clip(p)) / (1 - _clip(m))
                    )
                    totals[agent][0] += rate["s_weight"] * d * gain
                totals[agent][1] += rate["c_weight"] * d
    questions = frames.windows.height
    return {a: (s, c / questions) for a, (s, c) in totals.items()}


@pytest.mark.parametrize("reference", ["market", "cohort_median"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_running_integrals_equal_the_definition_on_random_worlds(reference: str, seed: int) -> None:
    """Random statements (at random hours), prices, windows with hidden periods and early or late
    resolutions: the fast computation equals the piece-by-piece definition above."""
    rng = np.random.default_rng(seed)
    agents = ["a", "b", "c", "bot"]
    markets = [f"polymarket:{k}" for k in range(4)]
    windows, resolutions, prices, forecasts = [], [], [], []
    for market in markets:
        opens, length = float(rng.integers(0, 3)), float(rng.integers(4, 10))
        windows.append(window(market, opens, opens + length, hidden_until=opens + 0.3 * length))
        resolved = opens + length * float(rng.uniform(0.5, 1.5))  # early close, or after the close
        resolutions.append(resolution(market, "YES" if rng.uniform() < 0.5 else "NO", at=day(resolved)))
        prices += [
            price(market, day(t), float(rng.uniform(0.05, 0.95)))
            for t in sorted({opens - 1, *rng.uniform(opens, opens + length, 4)})
        ]
        for agent in agents:
            times = sorted(set(rng.uniform(opens - 1, opens + length, int(rng.integers(0, 4)))))
            forecasts += [statement(agent, market, float(rng.uniform(0.0, 1.0)), day(t)) for t in times]
    frames = build(
        agents=[seat(a, kind="baseline" if a == "bot" else "llm") for a in agents],
        resolutions=resolutions,
        prices=prices,
        forecasts=forecasts,
        windows=windows,
        tournaments=[_settings(reference=reference, s_weight=0.6, c_weight=0.8)],
    )
    got = _by_agent(frames)
    for agent, (s, c) in _direct(frames).items():
        assert (got[agent]["tournament_score"], got[agent]["coverage"]) == (
            pytest.approx(s),
            pytest.approx(c),
        )


def test_a_pool_only_one_agent_covers_pays_it_against_the_reference() -> None:
    """Only half covered anything: S / ΣS would pay it the whole pool at s = −63.6. It is paid
    what it would take against the reference itself, which covers every question (s = 0, c = 1,
    S = 1): S / (S + 1). c = 0.9: at s = −63.6, about 2e−28 of the pool; at s = +1,
    0.9e / (0.9e + 1) = 71.0%; full coverage at s = 0: half."""
    cases = ((-63.6, 0.9), (1.0, 0.9), (0.0, 1.0))
    for s, c in cases:
        big_s = c * math.exp(s)
        standings = pl.DataFrame(
            {
                "agent": ["half", "hold", "market"],
                "tournament_score": [s, 0.0, 0.0],
                "coverage": [c, 0.0, 0.0],
            }
        )
        got = {r["agent"]: r for r in split_prizes(standings, 1000.0).iter_rows(named=True)}
        assert got["half"]["tournament_take"] == pytest.approx(big_s / (big_s + 1), rel=1e-9)
        assert got["half"]["tournament_prize"] == pytest.approx(1000.0 * big_s / (big_s + 1), rel=1e-9)
        assert (got["hold"]["tournament_take"], got["market"]["tournament_prize"]) == (0.0, 0.0)
    assert round(0.9 * math.e / (0.9 * math.e + 1), 3) == 0.710
    assert lone_covered(standings) == "half"
    two = standings.with_columns(coverage=pl.Series([0.9, 0.1, 0.0]))
    assert lone_covered(two) is None
    assert split_prizes(two, 1000.0)["tournament_take"].sum() == pytest.approx(1.0)  # a contest: S / ΣS
