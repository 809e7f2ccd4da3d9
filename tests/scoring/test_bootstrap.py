"""The market-clustered bootstrap: weights, the matrix form against plain resampling, comparisons."""

from __future__ import annotations

import numpy as np
import pytest

from arena.scoring.stats.bootstrap import (
    Statistic,
    comparisons,
    intervals,
    percentile_interval,
    replicate_weights,
)


def test_replicate_weights_are_seeded_multinomial_draws() -> None:
    weights = replicate_weights(50, 300, seed=1)
    assert weights.shape == (50, 300)
    assert (weights.sum(axis=0) == 50).all()  # every replicate draws 50 markets
    assert np.array_equal(weights, replicate_weights(50, 300, seed=1))
    assert not np.array_equal(weights, replicate_weights(50, 300, seed=2))
    assert weights.mean() == pytest.approx(1.0)
    assert replicate_weights(0, 10, seed=1).shape == (0, 10)
    with pytest.raises(ValueError, match="at least 1"):
        replicate_weights(5, 0, seed=1)


def test_matrix_form_equals_resampling_markets_with_their_bets() -> None:
    """Replicate b of the vectorised statistic is the plain mean over bets of the markets drawn,
    each market's bets all taken as often as the market was drawn."""
    rng = np.random.default_rng(5)
    n_markets, agents = 8, 3
    bets = [  # (agent, market, score): agent 2 skips some markets
        (a, k, float(rng.uniform()))
        for a in range(agents)
        for k in range(n_markets)
        for _ in range(int(rng.integers(1, 4)))
        if not (a == 2 and k % 3 == 0)
    ]
    num, den = np.zeros((agents, n_markets)), np.zeros((agents, n_markets))
    for a, k, score in bets:
        num[a, k] += score
        den[a, k] += 1
    weights = replicate_weights(n_markets, 200, seed=9)
    point, lo, hi = intervals({"s": Statistic.ratio(num, den, higher_is_better=False)}, weights, 0.9)["s"]
    reps = np.full((agents, 200), np.nan)
    for b in range(200):
        drawn = np.repeat(np.arange(n_markets), weights[:, b].astype(int))
        for a in range(agents):
            scores = [s for k in drawn for (aa, kk, s) in bets if aa == a and kk == k]
            reps[a, b] = np.mean(scores) if scores else np.nan
    expected_lo = [np.quantile(r[np.isfinite(r)], 0.05) for r in reps]
    expected_hi = [np.quantile(r[np.isfinite(r)], 0.95) for r in reps]
    assert point == pytest.approx([np.mean([s for aa, _, s in bets if aa == a]) for a in range(agents)])
    assert lo == pytest.approx(expected_lo)
    assert hi == pytest.approx(expected_hi)


def test_percentile_interval_matches_numpy_and_skips_nan() -> None:
    rng = np.random.default_rng(0)
    reps = rng.normal(size=(4, 101))
    reps[1, :30] = np.nan
    reps[2, :] = np.nan
    lo, hi = percentile_interval(reps, 0.95)
    for i in (0, 1, 3):
        finite = reps[i][np.isfinite(reps[i])]
        assert (lo[i], hi[i]) == pytest.approx(tuple(np.quantile(finite, [0.025, 0.975])))
    assert np.isnan(lo[2]) and np.isnan(hi[2])


def test_comparison_with_the_leader() -> None:
    # Per-market Brier means: leader 0.1 on markets 0-3; agent 1: 0.2, 0.2, 0.1, 0.05 on 0-3;
    # agent 2 copies the leader; agent 3 only bet market 4, which the leader did not.
    num = np.array(
        [
            [0.1, 0.1, 0.1, 0.1, 0.0],
            [0.2, 0.2, 0.1, 0.05, 0.0],
            [0.1, 0.1, 0.1, 0.1, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.3],
        ]
    )
    den = (num > 0).astype(float)
    stat = Statistic.ratio(num, den, higher_is_better=False)
    weights = replicate_weights(5, 500, seed=3)
    got = comparisons({"brier": stat}, 0, weights, 0.95)["brier"]
    assert np.isnan(got["diff"][0]) and np.isnan(got["p_value"][0])  # the leader is not compared with itself
    assert got["diff"][1] == pytest.approx((0.2 + 0.2 + 0.1 + 0.05) / 4 - 0.1)
    # worse, worse, tie, better: one strict win of four (ties are not wins)
    assert (got["wins"][1], got["ties"][1], got["losses"][1]) == (1, 1, 2)
    assert got["share_better"][1] == 0.25
    assert got["common_markets"][1:].tolist() == [4, 4, 0]
    # Two identical forecasters: 0% better, four ties, and no p-value (nothing varies).
    assert (got["diff"][2], got["share_better"][2]) == (0.0, 0.0)
    assert (got["wins"][2], got["ties"][2], got["losses"][2]) == (0, 4, 0)
    assert np.isnan(got["p_value"][2])
    assert np.isnan(got["diff"][3]) and np.isnan(got["share_better"][3])  # nothing in common
    # The p-value is the share of centred replicates at least as far from the estimate as 0 is.
    assert 0 < got["p_value"][1] <= 1
    assert got["diff_lo"][1] <= got["diff"][1] <= got["diff_hi"][1]


def test_total_statistic_divides_by_a_fixed_scale() -> None:
    pnl = np.array([[100.0, -50.0, 0.0], [10.0, 0.0, 0.0]])
    stat = Statistic.total(
        pnl,
        np.array([[True, True, False], [True, False, False]]),
        np.array([1000.0, 100.0]),
        higher_is_better=True,
    )
    assert stat.point() == pytest.approx([0.05, 0.1])


def test_total_is_zero_in_replicates_without_the_agents_markets() -> None:
    # One market of two carries all of the P/L: a quarter of replicates draw it twice (+20%), half
    # once (+10%), a quarter never (0%, not skipped).
    stat = Statistic.total(
        np.array([[100.0, 0.0]]), np.array([[True, False]]), np.array([1000.0]), higher_is_better=True
    )
    point, lo, hi = intervals({"return": stat}, replicate_weights(2, 4000, seed=2), 0.95)["return"]
    assert (point[0], lo[0], hi[0]) == (pytest.approx(0.1), 0.0, pytest.approx(0.2))


def test_one_common_market_gives_no_p_value() -> None:
    """With one market in common every replicate draws that market: the difference is the same in
    all of them, so the bootstrap has no variance and no p-value (the formula alone would print
    1/(1 + B) = 0.0005, "highly significant")."""
    num = np.array([[0.1, 0.0], [0.4, 0.2]])
    den = np.array([[1.0, 0.0], [1.0, 1.0]])
    stat = Statistic.ratio(num, den, higher_is_better=False)
    got = comparisons({"brier": stat}, 0, replicate_weights(2, 2000, seed=0), 0.95)["brier"]
    assert got["common_markets"][1] == 1 and got["diff"][1] == pytest.approx(0.3)
    assert np.isnan(got["p_value"][1])
    assert (got["wins"][1], got["ties"][1], got["losses"][1], got["share_better"][1]) == (0, 0, 1, 0.0)
