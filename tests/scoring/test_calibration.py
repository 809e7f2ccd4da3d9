"""Reliability tables, ECE and the Murphy decomposition, by hand and as identities."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.scoring.board.tables import calibration_summary, calibration_table
from arena.scoring.rules.calibration import BINS, murphy, reliability_table
from tests.scoring.builders import build, buy, resolution, seat


def _pairs(forecasts, outcomes, weights=None, agent="a") -> pl.DataFrame:
    n = len(forecasts)
    return pl.DataFrame(
        {
            "agent": [agent] * n,
            "forecast": np.asarray(forecasts, dtype=float),
            "outcome": np.asarray(outcomes, dtype=float),
            "weight": np.ones(n) if weights is None else np.asarray(weights, dtype=float),
        }
    )


# Four forecasts of 0.15 of which one happened, four of 0.85 of which three happened.
HAND = _pairs([0.15] * 4 + [0.85] * 4, [0, 0, 0, 1, 1, 1, 1, 0])


def test_reliability_table_by_hand() -> None:
    table = reliability_table(HAND, ["agent"])
    assert table["bin"].to_list() == [1, 8]
    assert table["count"].to_list() == [4, 4]
    assert table["lower"].to_list() == [0.1, 0.8]
    assert table["mean_forecast"].to_list() == pytest.approx([0.15, 0.85])
    assert table["observed"].to_list() == pytest.approx([0.25, 0.75])


def test_murphy_by_hand() -> None:
    # N = 8, base rate 0.5. REL = ½(0.15 − 0.25)² + ½(0.85 − 0.75)² = 0.01;
    # RES = ½(0.25 − 0.5)² + ½(0.75 − 0.5)² = 0.0625; UNC = 0.5 × 0.5 = 0.25.
    # Brier = (6 × 0.15² + 2 × 0.85²) / 8 = 0.1975 = 0.01 − 0.0625 + 0.25. ECE = ½·0.1 + ½·0.1.
    row = murphy(HAND, ["agent"]).row(0, named=True)
    assert row["reliability"] == pytest.approx(0.01)
    assert row["resolution"] == pytest.approx(0.0625)
    assert row["uncertainty"] == pytest.approx(0.25)
    assert row["brier"] == pytest.approx(0.1975)
    assert row["ece"] == pytest.approx(0.1)
    assert row["within_bin"] == pytest.approx(0.0, abs=1e-15)


def test_bin_edges() -> None:
    table = reliability_table(_pairs([0.0, 0.1, 0.0999, 0.95, 1.0], [0, 0, 0, 1, 1]), ["agent"])
    assert dict(zip(table["bin"], table["count"], strict=True)) == {0: 2, 1: 1, 9: 2}


@pytest.mark.parametrize("seed", range(5))
def test_decomposition_is_exact_for_binned_forecasts(seed: int) -> None:
    """REL − RES + UNC == Brier when forecasts take their bin's value, also with 50-50
    outcomes and unequal weights (UNC is then the weighted variance of the outcomes)."""
    rng = np.random.default_rng(seed)
    n = 500
    forecasts = (rng.integers(0, BINS, n) + 0.5) / BINS
    outcomes = rng.choice([0.0, 0.5, 1.0], n, p=[0.45, 0.1, 0.45])
    weights = rng.uniform(0.1, 2.0, n)
    row = murphy(_pairs(forecasts, outcomes, weights), ["agent"]).row(0, named=True)
    brier = np.average((forecasts - outcomes) ** 2, weights=weights)
    assert row["brier"] == pytest.approx(brier, abs=1e-12)
    assert row["reliability"] - row["resolution"] + row["uncertainty"] == pytest.approx(brier, abs=1e-12)


def test_within_bin_term_matches_stephenson_for_continuous_forecasts() -> None:
    rng = np.random.default_rng(3)
    n = 2_000
    forecasts = rng.uniform(0, 1, n)
    outcomes = (rng.uniform(0, 1, n) < forecasts).astype(float)
    row = murphy(_pairs(forecasts, outcomes), ["agent"]).row(0, named=True)
    bins = np.minimum((forecasts * BINS).astype(int), BINS - 1)
    wbv = wbc = 0.0
    for k in np.unique(bins):
        f, o = forecasts[bins == k], outcomes[bins == k]
        wbv += ((f - f.mean()) ** 2).sum() / n
        wbc += 2 * ((o - o.mean()) * (f - f.mean())).sum() / n
    assert row["within_bin"] == pytest.approx(wbv - wbc, abs=1e-12)


def test_calibration_of_bets_is_yes_oriented() -> None:
    # A NO bet at 20% confidence is a 0.8 forecast of YES (bin 8); NO won so YES's outcome is 0.
    frames = build(
        agents=[seat("a")],
        fills=[buy("a", "polymarket:m", "NO", "500", 0.5)],
        resolutions=[resolution("polymarket:m", "NO")],
    )
    table = calibration_table(frames, "implied")
    assert table.select("agent", "bin", "count", "mean_forecast", "observed").row(0) == ("a", 8, 1, 0.8, 0.0)
    assert calibration_summary(frames, "implied")["brier"].item() == pytest.approx(0.64)
