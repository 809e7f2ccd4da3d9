"""Bootstrap intervals and comparisons with the leader, for the registry's metrics.

Intervals (``<metric>_lo`` / ``<metric>_hi``) for every registered metric with ``interval``:
ratio metrics resample their own per-market sums (``metric_spec.Ratio``), ``return_pct``
resamples P/L per market over the bankroll, and a difficulty-adjusted Brier refits its fixed
effects on each replicate (``arena.scoring.stats.adjusted_intervals``), with the same draws.
Return's interval keeps the small unattributed rest (time between the last price and the last
mark) fixed, so it brackets the headline return; it is bounded below by −100% (no book loses
more than its bankroll). A skill score ``1 − ratio`` flips the ratio's interval.

Comparisons with the leader (the first row of the sorted table) on every metric with
``compared``, restricted to the markets both took part in: ``vs_leader_<m>_diff`` (agent −
leader) with ``_lo``/``_hi``, ``_p_value``, ``_p_value_reason``, ``_share_better`` (strict wins
over the common markets), ``_wins``, ``_ties``, ``_losses``, ``_common_markets`` and
``_few_markets`` (fewer common *resolved* markets than ``min_markets``: too few to trust; a
metric's ``flagged_by`` names whose common markets judge it, as return's own count includes
open markets). A comparison flagged ``few_markets``, or whose bootstrap has no variance, has no
p-value: ``_p_value`` is null and ``_p_value_reason`` says why (null when a p-value is given, and
for the leader, which is compared with nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from arena.scoring.metrics.inputs import Inputs
from arena.scoring.metrics.registry import COMPARED, METRICS
from arena.scoring.metrics.spec import ROW_SOURCES, FixedEffects, MarketPnl, Metric
from arena.scoring.rules.difficulty import Panel
from arena.scoring.rules.sums import grouped_sums
from arena.scoring.stats.adjusted_intervals import adjusted_interval
from arena.scoring.stats.bootstrap import (
    Statistic,
    clustered_intervals,
    comparisons,
    dense,
    intervals,
    replicate_weights,
)

BOOTSTRAPPED: tuple[Metric, ...] = tuple(m for m in METRICS if m.interval or m.compared)
FIELDS = ("diff", "diff_lo", "diff_hi", "p_value", "share_better", "wins", "ties", "losses", "common_markets")
COUNTED = ("wins", "ties", "losses", "common_markets")


def _part(metric: Metric, part: str) -> pl.Expr:
    if metric.ratio is None:
        raise ValueError(f"metric {metric.key!r} is not a ratio")
    return metric.ratio.num if part == "num" else metric.ratio.denominator()


def _columns() -> dict[tuple[str, str], str]:
    """One column per distinct row-wise expression of a source: metrics sharing a numerator or a
    denominator (a Brier and its skill scores) share its sums and its bootstrap products."""
    columns: dict[tuple[str, str], str] = {}
    for m in METRICS:
        if m.ratio is not None:
            for part in ("num", "den"):
                columns.setdefault((m.ratio.source, str(_part(m, part))), f"_s{len(columns)}")
    return columns


COLUMNS_OF = _columns()


def sum_column(metric: Metric, part: str) -> str:
    """The column holding ``part`` ("num" or "den") of a ratio metric in ``ratio_sources``."""
    source = metric.ratio.source if metric.ratio is not None else ""
    return COLUMNS_OF[(source, str(_part(metric, part)))]


def ratio_sources(inputs: Inputs) -> dict[str, pl.DataFrame]:
    """Per ratio source, its rows with one column per distinct numerator or denominator."""
    rows = {name: source(inputs) for name, source in ROW_SOURCES.items()}
    columns: dict[str, dict[str, pl.Expr]] = {name: {} for name in ROW_SOURCES}
    for m in METRICS:
        if m.ratio is not None:
            for part in ("num", "den"):
                columns[m.ratio.source][sum_column(m, part)] = _part(m, part)
    return {
        source: frame.select(
            "agent",
            "market_id",
            *(expr.cast(pl.Float64).fill_null(0.0).alias(name) for name, expr in columns[source].items()),
        )
        for source, frame in rows.items()
    }


def bootstrap_columns(
    table: pl.DataFrame,
    sources: dict[str, pl.DataFrame],
    pnl_by_market: pl.DataFrame,
    difficulty_cells: Mapping[Panel, pl.DataFrame],
    *,
    seed: int,
    replicates: int,
    level: float,
    min_markets: int,
    seats: pl.DataFrame | None = None,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> pl.DataFrame:
    """Interval and comparison columns for the agents of ``table`` (in its order; row 0 leads).

    With ``groups`` (a board row's name → its replicates' seat names, the rows of ``seats``), a
    replicated agent's row is the mean of its replicates: its intervals come from the two-stage
    bootstrap (``bootstrap.clustered_intervals``: markets, then replicates, resampled), and its
    comparison with the leader from its replicates pooled (markets resampled)."""
    agents = table["agent"].to_list()
    seat_table = table if not groups or seats is None else seats
    seat_names = seat_table["agent"].to_list()
    sums = _market_sums(sources, pnl_by_market)
    markets = sorted(set().union(*(frame["market_id"].to_list() for frame in sums.values())))
    seat_stats = _statistics(seat_names, markets, sums, seat_table["bankroll"].cast(pl.Float64).to_numpy())
    weights = replicate_weights(len(markets), replicates, seed)
    columns: dict[str, object] = {"agent": agents}
    interval_keys = [m.key for m in BOOTSTRAPPED if m.interval and m.key in seat_stats]
    for m in BOOTSTRAPPED:  # fitted on the board's rows, whatever their replicates
        if isinstance(m.bootstrap, FixedEffects):
            cells = difficulty_cells[m.bootstrap.panel]
            columns[f"{m.key}_lo"], columns[f"{m.key}_hi"] = adjusted_interval(
                cells, agents, markets, weights, level
            )
    if groups and seats is not None:
        index = {name: i for i, name in enumerate(seat_names)}
        rows = [[index[s] for s in groups.get(agent, [agent])] for agent in agents]
        stats = {key: _pooled(stat, rows) for key, stat in seat_stats.items()}
        found = clustered_intervals({k: seat_stats[k] for k in interval_keys}, rows, weights, level, seed)
    else:
        stats = seat_stats
        found = intervals({k: stats[k] for k in interval_keys}, weights, level)
    for name, (point, lo, hi) in found.items():
        ratio = BY_STAT[name].ratio
        if ratio is not None and ratio.skill:  # computed as a ratio; the skill is 1 − that / reference
            lo, hi = 1.0 - hi / ratio.reference, 1.0 - lo / ratio.reference
        if isinstance(BY_STAT[name].bootstrap, MarketPnl):
            unattributed = table[name].cast(pl.Float64).fill_null(np.nan).to_numpy() - point
            # Resampled totals can lose more than the bankroll; a real book cannot.
            lo, hi = np.maximum(lo + unattributed, -100.0), np.maximum(hi + unattributed, -100.0)
        columns[f"{name}_lo"], columns[f"{name}_hi"] = lo, hi
    columns.update(_comparison_columns(stats, weights, level, len(agents)))
    frame = pl.DataFrame(columns, nan_to_null=True, schema_overrides={"agent": pl.String})
    frame = frame.with_columns(
        *(pl.col(f"vs_leader_{n}_{count}").cast(pl.Int64) for n in COMPARED for count in COUNTED),
        # Null for the leader itself (nothing compared), like every other comparison column.
        *(
            (pl.col(f"vs_leader_{BY_STAT[n].flagged_by or n}_common_markets") < min_markets).alias(
                f"vs_leader_{n}_few_markets"
            )
            for n in COMPARED
        ),
    )
    return frame.with_columns(
        column for n in COMPARED for column in _without_unfounded_p_value(n, min_markets)
    )


def _without_unfounded_p_value(name: str, min_markets: int) -> tuple[pl.Expr, pl.Expr]:
    """``_p_value`` null where the comparison rests on too few markets, and ``_p_value_reason``
    saying why a p-value is missing: no common market, too few, or no bootstrap variance."""
    p, few = pl.col(f"vs_leader_{name}_p_value"), pl.col(f"vs_leader_{name}_few_markets")
    common = pl.col(f"vs_leader_{name}_common_markets")
    reason = (
        pl.when(few.is_null())
        .then(None)
        .when(common == 0)
        .then(pl.lit("no common market"))
        .when(few)
        .then(pl.lit(f"fewer than {min_markets} common resolved markets"))
        .when(p.is_null())
        .then(pl.lit("no bootstrap variance: the difference is the same in every replicate"))
    )
    return (
        pl.when(few.fill_null(True)).then(None).otherwise(p).alias(f"vs_leader_{name}_p_value"),
        reason.alias(f"vs_leader_{name}_p_value_reason"),
    )


BY_STAT: dict[str, Metric] = {m.key: m for m in BOOTSTRAPPED}


def _pooled(stat: Statistic, rows: list[list[int]]) -> Statistic:
    """``stat`` with each board row the sum of its members' rows (a replicated agent's copies
    pooled), for comparisons with the leader."""
    num = np.array([stat.num[members].sum(axis=0) for members in rows]).reshape(len(rows), -1)
    den = np.array([stat.den[members].sum(axis=0) for members in rows]).reshape(len(rows), -1)
    present = np.array([stat.present[members].any(axis=0) for members in rows]).reshape(len(rows), -1)
    scale = None if stat.scale is None else np.array([stat.scale[members].sum() for members in rows])
    return Statistic(num, den, present, stat.higher_is_better, scale)


def _comparison_columns(
    stats: dict[str, Statistic], weights: np.ndarray, level: float, n_agents: int
) -> dict[str, np.ndarray]:
    """``vs_leader_<metric>_<field>`` for the compared metrics, the leader being row 0."""
    if n_agents == 0:
        return {f"vs_leader_{n}_{f}": np.array([]) for n in COMPARED for f in FIELDS}
    compared = comparisons({name: stats[name] for name in COMPARED}, 0, weights, level)
    return {f"vs_leader_{name}_{field}": compared[name][field] for name in COMPARED for field in FIELDS}


def _market_sums(sources: dict[str, pl.DataFrame], pnl_by_market: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Per (agent, market) sums each statistic is a ratio of; sorted, so sums are reproducible."""
    sums = {
        source: grouped_sums(
            rows, ["agent", "market_id"], [c for c in rows.columns if c not in ("agent", "market_id")]
        )
        for source, rows in sources.items()
    }
    # P/L is Decimal: its sum is exact in any order, and only then made a float.
    sums["pnl"] = pnl_by_market.group_by("agent", "market_id").agg(
        pnl=pl.col("pnl").sum().cast(pl.Float64) * 100.0, n=pl.len()
    )
    return sums


def _statistics(
    agents: list[str], markets: list[str], sums: dict[str, pl.DataFrame], bankroll: np.ndarray
) -> dict[str, Statistic]:
    matrices = {
        source: dense(frame, agents, markets, [c for c in frame.columns if c not in ("agent", "market_id")])
        for source, frame in sums.items()
    }
    stats = {}
    for m in BOOTSTRAPPED:
        if isinstance(m.bootstrap, FixedEffects):
            continue  # refitted per replicate: ``adjusted_interval``
        if m.ratio is not None:
            source = matrices[m.ratio.source]
            num, den = source[sum_column(m, "num")], source[sum_column(m, "den")]
            # A skill score 1 − Σa/Σb is better when the ratio is lower.
            better = (m.better == "higher") != m.ratio.skill
            stats[m.key] = Statistic.ratio(num, den, higher_is_better=better)
        else:
            pnl = matrices["pnl"]
            stats[m.key] = Statistic.total(
                pnl["pnl"], pnl["n"] > 0, bankroll, higher_is_better=m.better == "higher"
            )
    return stats
