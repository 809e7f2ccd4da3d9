"""Bootstrap intervals and comparisons with the leader, for the leaderboard's key metrics.

Intervals (``<metric>_lo`` / ``<metric>_hi``) for: ``brier`` (implied, per bet), ``bss_market``,
``stated_brier``, ``log_score``, ``rel_log_score`` (per event) and ``return_pct`` (P/L per
market over the bankroll). Return's interval resamples the market-attributed P/L and keeps the
small unattributed rest (time between the last price and the last mark) fixed, so it brackets
the headline return; it is bounded below by −100% (no book loses more than its bankroll).

Comparisons with the leader (the first row of the sorted table) on ``brier``, ``log_score``
and ``return_pct``, restricted to the markets both took part in: ``vs_leader_<m>_diff``
(agent − leader) with ``_lo``/``_hi``, ``_p_value``, ``_share_better``, ``_common_markets``
and ``_few_markets`` (fewer common *resolved* markets than ``min_markets``: too few to trust;
for return, the resolved markets both bet on, as its own count includes open markets).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from arena.scoring.bootstrap import Statistic, comparisons, dense, intervals, replicate_weights

COMPARED = ("brier", "log_score", "return_pct")
COMPARISON_FIELDS = ("diff", "diff_lo", "diff_hi", "p_value", "share_better", "common_markets")
# The return comparison also counts open markets (P/L at the last price); whether it rests on
# enough *resolved* markets is judged by the Brier comparison's: resolved markets both bet on.
FLAGGED_BY = {"return_pct": "brier"}


def bootstrap_columns(
    table: pl.DataFrame,
    bets: pl.DataFrame,
    events: pl.DataFrame,
    pnl_by_market: pl.DataFrame,
    *,
    seed: int,
    replicates: int,
    level: float,
    min_markets: int,
) -> pl.DataFrame:
    """Interval and comparison columns for the agents of ``table`` (in its order; row 0 leads)."""
    agents = table["agent"].to_list()
    sums = _market_sums(bets, events, pnl_by_market)
    markets = sorted(set().union(*(frame["market_id"].to_list() for frame in sums.values())))
    stats = _statistics(agents, markets, sums, table["bankroll"].cast(pl.Float64).to_numpy())
    weights = replicate_weights(len(markets), replicates, seed)
    columns: dict[str, object] = {"agent": agents}
    for name, (point, lo, hi) in intervals(stats, weights, level).items():
        if name == "bss_market":  # computed as Σ brier / Σ market brier; skill is 1 − that
            lo, hi = 1.0 - hi, 1.0 - lo
        if name == "return_pct":
            unattributed = table["return_pct"].cast(pl.Float64).fill_null(np.nan).to_numpy() - point
            # Resampled totals can lose more than the bankroll; a real book cannot.
            lo, hi = np.maximum(lo + unattributed, -100.0), np.maximum(hi + unattributed, -100.0)
        columns[f"{name}_lo"], columns[f"{name}_hi"] = lo, hi
    columns.update(_comparison_columns(stats, weights, level, len(agents)))
    frame = pl.DataFrame(columns, nan_to_null=True, schema_overrides={"agent": pl.String})
    return frame.with_columns(
        *(pl.col(f"vs_leader_{n}_common_markets").cast(pl.Int64) for n in COMPARED),
        # Null for the leader itself (nothing compared), like every other comparison column.
        *(
            (pl.col(f"vs_leader_{FLAGGED_BY.get(n, n)}_common_markets") < min_markets).alias(
                f"vs_leader_{n}_few_markets"
            )
            for n in COMPARED
        ),
    )


def _comparison_columns(
    stats: dict[str, Statistic], weights: np.ndarray, level: float, n_agents: int
) -> dict[str, np.ndarray]:
    """``vs_leader_<metric>_<field>`` for the compared metrics, the leader being row 0."""
    if n_agents == 0:
        return {f"vs_leader_{n}_{f}": np.array([]) for n in COMPARED for f in COMPARISON_FIELDS}
    compared = comparisons({name: stats[name] for name in COMPARED}, 0, weights, level)
    return {
        f"vs_leader_{name}_{field}": compared[name][field] for name in COMPARED for field in COMPARISON_FIELDS
    }


def _market_sums(
    bets: pl.DataFrame, events: pl.DataFrame, pnl_by_market: pl.DataFrame
) -> dict[str, pl.DataFrame]:
    """Per (agent, market) sums each statistic is a ratio of."""
    scored = bets.filter(pl.col("scored"))
    return {
        "bets": scored.group_by("agent", "market_id").agg(
            brier=pl.col("brier").sum(), brier_market=pl.col("brier_market").sum(), n=pl.len()
        ),
        "events": events.group_by("agent", "market_id").agg(
            brier=pl.col("brier").sum(),
            log_score=pl.col("log_score").sum(),
            n=pl.len(),
            rel_log_score=pl.col("rel_log_score").sum(),
            rel_n=pl.col("rel_log_score").is_not_null().sum(),
        ),
        "pnl": pnl_by_market.group_by("agent", "market_id").agg(pnl=pl.col("pnl").sum() * 100.0, n=pl.len()),
    }


def _statistics(
    agents: list[str], markets: list[str], sums: dict[str, pl.DataFrame], bankroll: np.ndarray
) -> dict[str, Statistic]:
    bets = dense(sums["bets"], agents, markets, ["brier", "brier_market", "n"])
    events = dense(sums["events"], agents, markets, ["brier", "log_score", "n", "rel_log_score", "rel_n"])
    pnl = dense(sums["pnl"], agents, markets, ["pnl", "n"])
    return {
        "brier": Statistic.ratio(bets["brier"], bets["n"], higher_is_better=False),
        "bss_market": Statistic.ratio(bets["brier"], bets["brier_market"], higher_is_better=False),
        "stated_brier": Statistic.ratio(events["brier"], events["n"], higher_is_better=False),
        "log_score": Statistic.ratio(events["log_score"], events["n"], higher_is_better=True),
        "rel_log_score": Statistic.ratio(events["rel_log_score"], events["rel_n"], higher_is_better=True),
        "return_pct": Statistic.total(pnl["pnl"], pnl["n"] > 0, bankroll, higher_is_better=True),
    }
