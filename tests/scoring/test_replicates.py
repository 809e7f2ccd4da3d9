"""Replicated agents on the leaderboard: one row, the replicates' mean, with an interval that
holds the spread between replicates (a two-stage bootstrap: markets, then replicates)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.scoring import Settings, leaderboard_document
from arena.scoring.stats.bootstrap import (
    Statistic,
    clustered_intervals,
    intervals,
    replicate_draws,
    replicate_weights,
)
from tests.scoring.builders import build, buy, day, mark, resolution, seat

N_MARKETS = 10


def _frames(copies: dict[str, list[str]]):
    """Every seat bets $1,000 YES at 0.5 on each of 10 markets; half of them resolve YES.

    ``copies`` maps a seat to the markets it bets on; every seat is marked at its settled value:
    $10,000 + $1,000 per winning market − $1,000 per losing one.
    """
    markets = [f"polymarket:{k}" for k in range(N_MARKETS)]
    winners = {m: ("YES" if k % 2 else "NO") for k, m in enumerate(markets)}
    fills, snapshots = [], []
    for agent, chosen in copies.items():
        fills += [buy(agent, m, "YES", "1000", 0.5, at=day(0)) for m in chosen]
        value = 10_000 + sum(1000 if winners[m] == "YES" else -1000 for m in chosen)
        snapshots.append(mark(agent, day(5), str(value)))
    return build(
        agents=[seat(agent) for agent in copies],
        fills=fills,
        resolutions=[resolution(m, winners[m], at=day(5)) for m in markets],
        snapshots=snapshots,
    )


def _document(copies: dict[str, list[str]], seed: int = 3) -> dict:
    return leaderboard_document(
        _frames(copies), Settings(seed=seed, replicates=400), cohorts=["c1"], as_of=None
    )


def test_a_replicated_agent_is_one_row_the_mean_of_its_replicates() -> None:
    markets = [f"polymarket:{k}" for k in range(N_MARKETS)]
    document = _document(
        {
            "x#1": markets[:4],  # 2 wins, 2 losses: +0%
            "x#2": markets[1:4],  # 2 wins, 1 loss: +10%
            "x#3": markets[1:2],  # 1 win: +10%
            "solo": markets,
        }
    )
    rows = {row["agent"]: row for row in document["agents"]}
    assert set(rows) == {"x", "solo"}
    x = rows["x"]
    assert x["replicates"] == 3 and rows["solo"]["replicates"] == 1
    assert x["return_pct"] == pytest.approx((0 + 10 + 10) / 3)
    assert x["bets"] == pytest.approx((4 + 3 + 1) / 3)  # counts are means too
    assert x["value"] == pytest.approx(10_000 + (0 + 1000 + 1000) / 3, abs=0.01)
    assert x["return_pct_lo"] <= x["return_pct"] <= x["return_pct_hi"]
    assert [r["agent"] for r in document["replicate_rows"]] == ["x#2", "x#3", "x#1"]  # ranked
    assert [r["return_pct"] for r in document["replicate_rows"]] == pytest.approx([10, 10, 0])
    again = _document({"x#1": markets[:4], "x#2": markets[1:4], "x#3": markets[1:2], "solo": markets})
    assert again["agents"] == document["agents"]  # the seed fixes both stages


def test_copies_pooled_with_an_unreplicated_namesake_keep_their_own_rows() -> None:
    markets = [f"polymarket:{k}" for k in range(N_MARKETS)]
    document = _document({"x": markets[:2], "x#1": markets[:4], "x#2": markets[1:4]})
    assert sorted(row["agent"] for row in document["agents"]) == ["x", "x#1", "x#2"]
    assert all(row["replicates"] == 1 for row in document["agents"]) and document["replicate_rows"] == []


def test_identical_replicates_keep_the_market_interval_and_different_ones_widen_it() -> None:
    """Resampling replicates adds exactly the spread between them: nothing when they agree."""
    rng = np.random.default_rng(0)
    base = rng.normal(0, 100, size=(1, 40))
    bankroll = np.array([10_000.0])
    weights = replicate_weights(40, 2000, seed=1)

    def total(rows: np.ndarray) -> Statistic:
        return Statistic.total(
            rows, np.ones_like(rows, dtype=bool), np.full(len(rows), 10_000.0), higher_is_better=True
        )

    single = intervals(
        {"r": Statistic.total(base, np.ones_like(base, dtype=bool), bankroll, higher_is_better=True)},
        weights,
        0.95,
    )["r"]
    same = clustered_intervals(
        {"r": total(np.vstack([base, base, base]))}, [[0, 1, 2]], weights, 0.95, seed=1
    )["r"]
    assert same[0][0] == pytest.approx(single[0][0]) and same[1][0] == pytest.approx(single[1][0])
    assert same[2][0] == pytest.approx(single[2][0])
    shifted = np.vstack([base - 300, base, base + 300])  # replicates 12 points of return apart
    spread = clustered_intervals({"r": total(shifted)}, [[0, 1, 2]], weights, 0.95, seed=1)["r"]
    pooled = intervals({"r": total(shifted.mean(axis=0, keepdims=True))}, weights, 0.95)["r"]
    assert spread[0][0] == pytest.approx(pooled[0][0])  # the same mean
    assert spread[2][0] - spread[1][0] > 1.5 * (pooled[2][0] - pooled[1][0])  # a wider interval


def test_replicate_draws_are_multinomial_and_a_lone_agent_is_always_itself() -> None:
    draws = replicate_draws(4, 500, seed=2, salt=1)
    assert draws.shape == (500, 4) and (draws.sum(axis=1) == 4).all()
    assert (replicate_draws(1, 5, seed=2, salt=1) == 1).all()
    assert (replicate_draws(4, 500, seed=2, salt=1) == draws).all()
    assert not (replicate_draws(4, 500, seed=2, salt=2) == draws).all()
