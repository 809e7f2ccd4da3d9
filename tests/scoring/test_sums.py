"""Float aggregates add a group's values in row order, so reruns give identical bits."""

from __future__ import annotations

import numpy as np
import polars as pl

from arena.scoring.rules.sums import fmean, fstd, fsum


def test_a_groups_sum_is_its_rows_in_order() -> None:
    # In order: 1e16 + 1 rounds back to 1e16 (the spacing of doubles there is 2), − 1e16 gives 0,
    # + 1 gives 1. Adding the halves first would give (1e16 + 1) + (−1e16 + 1) = 0.
    frame = pl.DataFrame({"g": ["a"] * 4 + ["b"], "x": [1e16, 1.0, -1e16, 1.0, None]})
    got = frame.group_by("g", maintain_order=True).agg(s=fsum(pl.col("x")), m=fmean(pl.col("x")))
    assert got.rows() == [("a", 1.0, 0.25), ("b", 0.0, None)]  # an empty sum is +0, a mean of nothing null


def test_many_groups_give_the_same_bits_every_time() -> None:
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"g": rng.integers(0, 40, 300_000), "x": rng.random(300_000) * 1e3})
    runs = {
        frame.group_by("g", maintain_order=True)
        .agg(fsum(pl.col("x")).alias("s"), fstd(pl.col("x")).alias("d"))
        .sort("g")
        .hash_rows()
        .sum()
        for _ in range(12)
    }
    assert len(runs) == 1
