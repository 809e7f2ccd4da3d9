"""The difficulty-adjusted Brier (question fixed effects, pooled cohorts): by hand, and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import statsmodels.formula.api as smf

from arena.scoring import leaderboard
from arena.scoring.rules import difficulty
from arena.scoring.rules.difficulty import CELL, REFERENCE, adjusted, design, fit_panel, skills
from tests.scoring.builders import Row, build, buy, day, resolution, seat, statement

# Every market resolves NO, so a forecast p of YES scores p². The market prices offered (the
# reference forecaster) make E1, E2 easy (price 0.2: Brier 0.04) and H1, H2 hard (0.5: 0.25).
PRICE = {"E1": 0.2, "E2": 0.2, "H1": 0.5, "H2": 0.5}


def offer(market: str, cohort: str) -> Row:
    return {
        "cohort_id": cohort,
        "market_id": market,
        "outcome": "YES",
        "offered_at": day(0),
        "price": PRICE[market],
        "shown": True,
    }


def states(agent: str, cohort: str, briers: dict[str, float]) -> list[Row]:
    return [statement(agent, m, math.sqrt(b), day(0), cohort=cohort) for m, b in briers.items()]


def two_cohorts(a: dict[str, float], b: dict[str, float]) -> pl.DataFrame:
    """A in cohort c1 and B in c2, each offered the markets it forecast; the pooled leaderboard."""
    frames = build(
        agents=[seat("A", "c1"), seat("B", "c2")],
        forecasts=states("A", "c1", a) + states("B", "c2", b),
        offers=[offer(m, "c1") for m in a] + [offer(m, "c2") for m in b],
        resolutions=[resolution(m, "NO") for m in PRICE],
    )
    return leaderboard(frames, by="stated_brier_adjusted", seed=1, replicates=200)


def test_a_better_agent_on_harder_markets_ranks_first_once_adjusted() -> None:
    # A is 0.03 better than the market everywhere, B 0.02 worse; A drew two hard markets, B two easy.
    a = {"E1": 0.04 - 0.03, "H1": 0.25 - 0.03, "H2": 0.25 - 0.03}
    b = {"E1": 0.04 + 0.02, "E2": 0.04 + 0.02, "H1": 0.25 + 0.02}
    table = two_cohorts(a, b).sort("agent")
    raw = dict(zip(table["agent"], table["stated_brier"], strict=True))
    fair = dict(zip(table["agent"], table["stated_brier_adjusted"], strict=True))
    # Raw: A (0.01 + 0.22 + 0.22) / 3 = 0.15, B (0.06 + 0.06 + 0.27) / 3 = 0.13: B looks better.
    assert raw == pytest.approx({"A": 0.15, "B": 0.13})
    # The panel fits exactly: a_A = −0.03, a_B = +0.02 against the market, b_j = the market's
    # Brier; b̄ = (0.04 + 0.04 + 0.25 + 0.25) / 4 = 0.145, so A = 0.115 and B = 0.165.
    assert fair == pytest.approx({"A": 0.115, "B": 0.165})
    assert table.sort("rank")["agent"].to_list() == ["A", "B"]
    assert table["stated_brier_adjusted_why"].to_list() == [None, None]
    lo, hi = table["stated_brier_adjusted_lo"].to_list(), table["stated_brier_adjusted_hi"].to_list()
    assert all(
        lo_ <= f + 1e-12 and f <= hi_ + 1e-12 for lo_, f, hi_ in zip(lo, fair.values(), hi, strict=True)
    )


def test_agents_on_the_same_markets_keep_their_raw_differences() -> None:
    a = {"E1": 0.01, "E2": 0.09, "H1": 0.16, "H2": 0.30}
    b = {"E1": 0.05, "E2": 0.02, "H1": 0.36, "H2": 0.20}
    table = two_cohorts(a, b).sort("agent")
    raw, fair = table["stated_brier"].to_list(), table["stated_brier_adjusted"].to_list()
    assert fair[0] - fair[1] == pytest.approx(raw[0] - raw[1], abs=1e-12)
    assert fair == pytest.approx(raw, abs=1e-12)  # a balanced panel: adjusted is the raw mean


def _noisy_cells(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    markets = [f"m{k}" for k in range(15)]
    skill = {"A": -0.03, "B": 0.02, "C": 0.0, "D": 0.06}
    rows = []
    for m in markets:
        hard = rng.uniform(0.02, 0.3)
        rows.append((REFERENCE, m, hard + rng.normal(0, 0.01)))
        rows += [(f, m, s + hard + rng.normal(0, 0.02)) for f, s in skill.items() if rng.random() < 0.5]
    return pl.DataFrame(rows, schema=CELL, orient="row").sort("forecaster", "market_id")


def _library_fit(
    cells: pl.DataFrame, weights: dict[str, float] | None = None
) -> tuple[dict[str, float], float]:
    """statsmodels' own two-way fit (``brier ~ C(market) + C(forecaster)``, the market the base
    level), optionally with each market's weight: each agent's a_i (against the reference) and
    the mean over markets of b_j."""
    frame = cells.with_columns(
        f=pl.when(pl.col("forecaster") == REFERENCE).then(pl.lit("0ref")).otherwise("forecaster")
    ).to_pandas()
    formula = "brier ~ C(market_id) + C(f, Treatment('0ref'))"
    if weights is None:
        fit = smf.ols(formula, data=frame).fit()
    else:
        frame["w"] = frame["market_id"].map(weights)
        frame = frame[frame["w"] > 0]
        fit = smf.wls(formula, data=frame, weights=frame["w"]).fit()
    markets = sorted(set(frame["market_id"]))
    b = [fit.params["Intercept"] + fit.params.get(f"C(market_id)[T.{m}]", 0.0) for m in markets]
    skill = {k.split("[T.")[1][:-1]: v for k, v in fit.params.items() if k.startswith("C(f")}
    return skill, float(np.mean(b))


def test_the_fit_is_statsmodels_two_way_fixed_effects() -> None:
    cells = _noisy_cells(3)
    skill, mean_b = _library_fit(cells)
    assert fit_panel(cells) == pytest.approx({agent: a + mean_b for agent, a in skill.items()}, abs=1e-12)


def test_each_bootstrap_replicate_is_statsmodels_weighted_fit() -> None:
    cells = _noisy_cells(5)
    shape = design(cells)
    assert shape is not None
    rng = np.random.default_rng(0)
    draws = rng.multinomial(len(shape.markets), np.ones(len(shape.markets)) / len(shape.markets), size=4)
    solved = skills(shape, draws.astype(float))
    for weights, row in zip(draws, solved, strict=True):
        library, _ = _library_fit(cells, dict(zip(shape.markets, weights.astype(float), strict=True)))
        for agent, value in zip(shape.agents, row, strict=True):
            if agent in library:
                assert value == pytest.approx(library[agent], abs=1e-10)
            else:  # none of its markets drawn: skipped in that replicate
                assert math.isnan(value)
    ones = np.ones((1, len(shape.markets)))
    assert adjusted(shape, skills(shape, ones), ones)[0] == pytest.approx(list(fit_panel(cells).values()))


def test_one_cohort_is_not_adjusted_and_says_why() -> None:
    frames = build(
        agents=[seat("A"), seat("B")],
        forecasts=states("A", "c1", {"E1": 0.01, "H1": 0.2}) + states("B", "c1", {"E1": 0.03}),
        offers=[offer("E1", "c1"), offer("H1", "c1")],
        resolutions=[resolution(m, "NO") for m in PRICE],
    )
    table = leaderboard(frames, seed=1, replicates=20)
    assert table["stated_brier_adjusted"].to_list() == [None, None]
    assert table["stated_brier_adjusted_why"].to_list() == [difficulty.ONE_COHORT] * 2
    assert table["brier_adjusted_why"].to_list() == [None, None]  # nobody bet: no raw score to adjust


def test_too_few_markets_or_no_reference_price_is_said() -> None:
    one_market = two_cohorts({"E1": 0.01}, {"E1": 0.05})
    assert set(one_market["stated_brier_adjusted_why"]) == {
        "too few markets to estimate difficulty: 1 (at least 2)"
    }
    frames = build(
        agents=[seat("A", "c1"), seat("B", "c2")],
        forecasts=states("A", "c1", {"E1": 0.01, "H1": 0.2}) + states("B", "c2", {"E2": 0.05}),
        offers=[offer("E1", "c1"), offer("H1", "c1")],  # c2 recorded no offer of E2: no market price
        resolutions=[resolution(m, "NO") for m in PRICE],
    )
    table = leaderboard(frames, seed=1, replicates=20).sort("agent")
    assert table["stated_brier_adjusted"][1] is None
    assert table["stated_brier_adjusted_why"].to_list() == [
        None,
        "no scored market with a market price to compare with (the reference)",
    ]


def test_bets_are_adjusted_in_both_readings_with_the_fill_prices_as_reference() -> None:
    # One $500 bet each (max bet 2500: fa reads 0.2 on its side); A bets on hard markets, B on easy.
    bets = [
        buy("A", "m:H1", "YES", "500", 0.5, cohort="c1"),
        buy("A", "m:H2", "YES", "500", 0.5, cohort="c1"),
        buy("B", "m:E1", "NO", "500", 0.8, cohort="c2"),
        buy("B", "m:E2", "NO", "500", 0.8, cohort="c2"),
        buy("B", "m:H1", "YES", "500", 0.5, cohort="c2"),
    ]
    frames = build(
        agents=[seat("A", "c1"), seat("B", "c2")],
        fills=bets,
        resolutions=[resolution(f"m:{m}", "NO") for m in PRICE],
        decisions=[],
    )
    table = leaderboard(frames, seed=1, replicates=50).sort("agent")
    for key in ("brier_adjusted", "brier_adjusted_kelly"):
        assert table[key].null_count() == 0
        assert table[f"{key}_lo"].null_count() == 0
    # fa: A reads 0.2 on YES (NO won): 0.04 on each; B reads 0.2 on NO (won): 0.64 on E1, E2; 0.04 on H1.
    assert table["brier"].to_list() == pytest.approx([0.04, (0.64 + 0.64 + 0.04) / 3])
    # The reference (fill prices): H 0.25, E (1 − 0.8 on NO, NO won) 0.04. A is 0.21 better than
    # it on H1, H2; B 0.21 better on H1, 0.60 worse on E1, E2.
    fitted = dict(zip(table["agent"], table["brier_adjusted"], strict=True))
    assert fitted["A"] < fitted["B"]
