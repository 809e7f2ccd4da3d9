"""Calibration: reliability tables, expected calibration error and the Murphy decomposition.

Input is a frame of forecast/outcome pairs with a ``weight`` (1 per bet for implied forecasts;
the time share for stated ones, see ``arena.scoring.rules.stated``), grouped by any key columns.
Forecasts fall in ``BINS`` equal-width bins, [0, 0.1), [0.1, 0.2), ... [0.9, 1.0].

Murphy (1973), with ``n_k`` the weight of bin ``k``, ``f̄_k`` its mean forecast, ``ō_k`` its
observed rate and ``ō`` the overall rate, all shares of the total weight ``N``:

- reliability ``REL = Σ n_k (f̄_k − ō_k)² / N`` (lower is better),
- resolution ``RES = Σ n_k (ō_k − ō)² / N`` (higher is better),
- uncertainty ``UNC`` = the variance of the outcomes, ``ō(1 − ō)`` when they are all 0 or 1.

``Brier = REL − RES + UNC`` holds exactly when every forecast in a bin equals the bin's mean
(binned forecasts). For continuous forecasts the remainder is the within-bin term of
Stephenson et al. (2008); it is reported as ``within_bin = Brier − (REL − RES + UNC)``.
ECE ``= Σ n_k |f̄_k − ō_k| / N``.
"""

from __future__ import annotations

import polars as pl

from arena.scoring.rules.scores import brier
from arena.scoring.rules.sums import fsum

BINS = 10


def binned(pairs: pl.DataFrame, forecast: str = "forecast") -> pl.DataFrame:
    """``pairs`` with a ``bin`` column: 0..BINS-1, a forecast of exactly 1 in the top bin."""
    return pairs.with_columns(bin=(pl.col(forecast) * BINS).floor().cast(pl.Int32).clip(0, BINS - 1))


def reliability_table(pairs: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Per group and non-empty bin: count, weight, mean forecast, observed rate and their gap."""
    w, f, o = pl.col("weight"), pl.col("forecast"), pl.col("outcome")
    return (
        binned(pairs)
        .group_by([*by, "bin"], maintain_order=True)
        .agg(
            count=pl.len(),
            weight=fsum(w),
            mean_forecast=fsum(w * f) / fsum(w),
            observed=fsum(w * o) / fsum(w),
        )
        .with_columns(
            lower=pl.col("bin") / BINS,
            upper=(pl.col("bin") + 1) / BINS,
            gap=pl.col("mean_forecast") - pl.col("observed"),
        )
        .sort([*by, "bin"])
    )


def murphy(pairs: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Per group: brier, reliability, resolution, uncertainty, within_bin and ece."""
    table = reliability_table(pairs, by)
    w, f, o = pl.col("weight"), pl.col("forecast"), pl.col("outcome")
    overall = pairs.group_by(by, maintain_order=True).agg(
        brier=fsum(w * brier(f, o)) / fsum(w),
        base_rate=fsum(w * o) / fsum(w),
        mean_square=fsum(w * o**2) / fsum(w),
        total=fsum(w),
    )
    share = pl.col("weight") / pl.col("total")
    parts = (
        table.join(overall, on=by, how="inner", maintain_order="left")
        .group_by(by, maintain_order=True)
        .agg(
            reliability=fsum(share * pl.col("gap") ** 2),
            resolution=fsum(share * (pl.col("observed") - pl.col("base_rate")) ** 2),
            ece=fsum(share * pl.col("gap").abs()),
        )
    )
    return (
        overall.join(parts, on=by, how="inner")
        .with_columns(uncertainty=pl.col("mean_square") - pl.col("base_rate") ** 2)
        .with_columns(
            within_bin=pl.col("brier")
            - (pl.col("reliability") - pl.col("resolution") + pl.col("uncertainty"))
        )
        .select([*by, "brier", "reliability", "resolution", "uncertainty", "within_bin", "ece", "base_rate"])
    )
