"""Bootstrap intervals and comparisons with the leader for the complete stated readings.

The same market-clustered bootstrap as ``arena.scoring.intervals`` (see ``bootstrap``), over the
markets of the stated readings: intervals ``<metric>_lo`` / ``_hi`` for ``stated_brier_imputed``
and ``log_score_imputed``; comparisons with the leader (row 0 of the ranked table) on
``stated_brier`` (as stated), ``stated_brier_imputed`` and ``log_score_imputed``, with the same
fields as the other comparisons: ``vs_leader_<m>_diff`` (``_lo``, ``_hi``), ``_p_value``,
``_share_better``, ``_common_markets`` and ``_few_markets`` (fewer than ``min_markets``).
Imputed readings cover every offered market, so two agents share all their cohort's markets.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from arena.scoring.bootstrap import Statistic, comparisons, dense, intervals, replicate_weights
from arena.scoring.intervals import COMPARISON_FIELDS

STATED_INTERVALS = ("stated_brier_imputed", "log_score_imputed")
STATED_COMPARED = ("stated_brier", "stated_brier_imputed", "log_score_imputed")
LOWER_IS_BETTER = {"stated_brier": True, "stated_brier_imputed": True, "log_score_imputed": False}


def stated_interval_columns(
    agents: list[str],
    stated_events: pl.DataFrame,
    imputed_events: pl.DataFrame,
    *,
    seed: int,
    replicates: int,
    level: float,
    min_markets: int,
) -> pl.DataFrame:
    """Interval and comparison columns for ``agents`` (in ranked order; the first leads)."""
    sums = {
        "stated_brier": _sums(stated_events, "brier"),
        "stated_brier_imputed": _sums(imputed_events, "brier"),
        "log_score_imputed": _sums(imputed_events, "log_score"),
    }
    markets = sorted(set().union(*(frame["market_id"].to_list() for frame in sums.values())))
    stats = {
        name: Statistic.ratio(m["value"], m["n"], higher_is_better=not LOWER_IS_BETTER[name])
        for name, m in ((name, dense(frame, agents, markets, ["value", "n"])) for name, frame in sums.items())
    }
    weights = replicate_weights(len(markets), replicates, seed)
    columns: dict[str, object] = {"agent": agents}
    for name, (_point, lo, hi) in intervals({n: stats[n] for n in STATED_INTERVALS}, weights, level).items():
        columns[f"{name}_lo"], columns[f"{name}_hi"] = lo, hi
    if agents:
        compared = comparisons({n: stats[n] for n in STATED_COMPARED}, 0, weights, level)
        for name in STATED_COMPARED:
            for field in COMPARISON_FIELDS:
                columns[f"vs_leader_{name}_{field}"] = compared[name][field]
    else:
        columns.update(
            {f"vs_leader_{n}_{f}": np.array([]) for n in STATED_COMPARED for f in COMPARISON_FIELDS}
        )
    frame = pl.DataFrame(columns, nan_to_null=True, schema_overrides={"agent": pl.String})
    return frame.with_columns(
        *(pl.col(f"vs_leader_{n}_common_markets").cast(pl.Int64) for n in STATED_COMPARED),
        *(
            (pl.col(f"vs_leader_{n}_common_markets") < min_markets).alias(f"vs_leader_{n}_few_markets")
            for n in STATED_COMPARED
        ),
    )


def stated_interval_names() -> tuple[str, ...]:
    """The columns ``stated_interval_columns`` adds besides ``agent``, in order."""
    return (
        *(f"{name}_{end}" for name in STATED_INTERVALS for end in ("lo", "hi")),
        *(f"vs_leader_{n}_{f}" for n in STATED_COMPARED for f in (*COMPARISON_FIELDS, "few_markets")),
    )


def _sums(events: pl.DataFrame, score: str) -> pl.DataFrame:
    """Per (agent, market): the sum of event scores and the number of events."""
    return events.group_by("agent", "market_id").agg(value=pl.col(score).sum(), n=pl.len())
