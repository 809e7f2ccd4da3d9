"""Market-clustered bootstrap: confidence intervals and paired comparisons, vectorised.

The unit resampled is the *market*: all bets and forecasts on a market move together, because
they share one outcome and are not independent. A replicate draws K markets with replacement
out of the K scored markets; market k then appears ``W[k, b]`` times in replicate b. Every
statistic here is a ratio of per-market sums, ``Σ_k W[k,b]·num[a,k] / Σ_k W[k,b]·den[a,k]``
(or a sum over a fixed scale, for P/L over bankroll), so all replicates of all agents are two
matrix products (agents × markets) @ (markets × replicates). The same ``W`` is used for every
agent and metric, so comparisons are paired.

Intervals are percentile intervals. For a mean (Brier, log score) a replicate in which the
agent has no scored market is skipped for that agent; for a total (P/L) it counts as 0.
The p-value of a difference d is two-sided against "no difference", from the bootstrap
distribution centred on the estimate: (1 + #{|d*_b − d| ≥ |d|}) / (1 + B), where B counts the
replicates in which the difference is defined; none when those replicates never vary.
Comparisons only involve the leader's markets, so their products use only those rows of ``W``.

An agent run as N replicates (independent copies) is the mean of its copies, and its interval
must hold how much the copies differ as well as how much the markets do: ``clustered_intervals``
is a two-stage (hierarchical) bootstrap, which in each replicate b draws the markets (column b
of ``W``, shared by every row) and then N of the copies with replacement, and takes the mean of
the drawn copies' statistics under those market weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

DEFAULT_REPLICATES = 2_000
DEFAULT_LEVEL = 0.95


def replicate_weights(n_markets: int, replicates: int, seed: int) -> np.ndarray:
    """``W`` (markets × replicates): how often each market is drawn in each replicate.

    Each column sums to ``n_markets`` (a multinomial draw). Deterministic for a seed and size.
    """
    if replicates < 1:
        raise ValueError(f"replicates must be at least 1, got {replicates}")
    if n_markets == 0:
        return np.zeros((0, replicates))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_markets, size=(replicates, n_markets), dtype=np.int32)
    # float64, like the values they weight: float32 would hold the counts exactly but round the
    # values to 7 digits, so an interval's 7th digit would depend on the BLAS kernel and its
    # thread count, and two identical agents' paired difference would not be exactly 0.
    counts = np.empty((replicates, n_markets), dtype=np.float64)
    for replicate, drawn in enumerate(draws):
        counts[replicate] = np.bincount(drawn, minlength=n_markets)
    return counts.T


def dense(
    long: pl.DataFrame, rows: list[str], markets: list[str], values: list[str], row: str = "agent"
) -> dict[str, np.ndarray]:
    """(rows × markets) matrices of ``values`` from a long frame of unique (row, market_id) pairs."""
    matrices = {value: np.zeros((len(rows), len(markets))) for value in values}
    row_index = pl.DataFrame({row: rows, "_r": np.arange(len(rows))}, schema={row: pl.String, "_r": pl.Int64})
    market_index = pl.DataFrame(
        {"market_id": markets, "_k": np.arange(len(markets))}, schema={"market_id": pl.String, "_k": pl.Int64}
    )
    index = long.join(row_index, on=row, how="inner").join(market_index, on="market_id", how="inner")
    r, k = index["_r"].to_numpy(), index["_k"].to_numpy()
    for value, matrix in matrices.items():
        matrix[r, k] = index[value].cast(pl.Float64).to_numpy()
    return matrices


@dataclass(frozen=True)
class Statistic:
    """Per-agent ratio of market sums ``Σ num / Σ den``, or ``Σ num / scale`` when ``scale`` is set.

    ``present`` marks the markets an agent took part in (what "markets both bet on" means);
    ``higher_is_better`` orients comparisons.
    """

    num: np.ndarray
    den: np.ndarray
    present: np.ndarray
    higher_is_better: bool
    scale: np.ndarray | None = None

    @classmethod
    def ratio(cls, num: np.ndarray, den: np.ndarray, *, higher_is_better: bool) -> Statistic:
        return cls(num, den, den > 0, higher_is_better)

    @classmethod
    def total(
        cls, num: np.ndarray, present: np.ndarray, scale: np.ndarray, *, higher_is_better: bool
    ) -> Statistic:
        return cls(num, present.astype(np.float64), present, higher_is_better, scale)

    def evaluate(self, num: np.ndarray, den: np.ndarray) -> np.ndarray:
        """The statistic from (replicated) sums.

        A ratio is NaN where the agent has nothing to score (a mean of nothing); a total is
        simply 0 then, as a replicate without the agent's markets holds none of its P/L.
        """
        if self.scale is not None:
            scaled: np.ndarray = num / self.scale.reshape(-1, *([1] * (num.ndim - 1)))
            return scaled
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    def replicated(self) -> tuple[np.ndarray, ...]:
        """The matrices whose replicated sums ``evaluate`` needs."""
        return (self.num,) if self.scale is not None else (self.num, self.den)

    def point(self) -> np.ndarray:
        return self.evaluate(self.num.sum(axis=1), self.den.sum(axis=1))


def _products(weights: np.ndarray, matrices: list[np.ndarray]) -> list[np.ndarray]:
    """``m @ weights`` for each matrix, as one stacked product (shared matrices computed once)."""
    unique = list({id(m): m for m in matrices}.values())
    rows = [m.shape[0] for m in unique]
    stacked = np.vstack(unique).astype(np.float64) @ weights
    parts = dict(zip((id(m) for m in unique), np.split(stacked, np.cumsum(rows)[:-1]), strict=True))
    return [parts[id(m)] for m in matrices]


def percentile_interval(replicates: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the (1 − level)/2 and (1 + level)/2 quantiles of the non-NaN replicates.

    Numpy's default (linear) quantile, vectorised over rows: NaNs sort last and each row
    interpolates within its own finite prefix. Rows without any finite replicate give NaN.
    """
    tail = (1.0 - level) / 2.0
    ordered = np.sort(np.where(np.isfinite(replicates), replicates, np.nan), axis=1)
    count = np.isfinite(ordered).sum(axis=1)
    rows = np.arange(len(ordered))
    bounds = []
    for q in (tail, 1.0 - tail):
        position = q * np.maximum(count - 1, 0)
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(count - 1, 0))
        low, high = ordered[rows, below], ordered[rows, above]
        value = low + (position - below) * (high - low)
        bounds.append(np.where(count > 0, value, np.nan))
    return bounds[0], bounds[1]


def intervals(
    stats: Mapping[str, Statistic], weights: np.ndarray, level: float
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per statistic: point estimate and percentile interval per agent (one matrix product)."""
    result = {}
    for (name, stat), replicates in zip(
        stats.items(), _replicated(list(stats.values()), weights), strict=True
    ):
        lo, hi = percentile_interval(replicates, level)
        result[name] = (stat.point(), lo, hi)
    return result


def _replicated(stats: list[Statistic], weights: np.ndarray) -> list[np.ndarray]:
    """Each statistic's replicates (rows × replicates of ``weights``), from one stacked product."""
    sums = iter(_products(weights, [m for stat in stats for m in stat.replicated()]))
    replicates = []
    for stat in stats:
        num = next(sums)
        den = num if stat.scale is not None else next(sums)  # a total needs no denominator
        replicates.append(stat.evaluate(num, den))
    return replicates


def replicate_draws(members: int, replicates: int, seed: int, salt: int) -> np.ndarray:
    """(replicates × members) counts: how often each of an agent's ``members`` replicates is drawn
    in each bootstrap replicate (a multinomial draw of ``members``, like the markets' ``W``).
    Deterministic for a seed and ``salt`` (the agent's place on the board); a lone member is
    always drawn once, so an agent without replicates keeps its own market-only replicates."""
    if members == 1:
        return np.ones((replicates, 1))
    rng = np.random.default_rng([seed, salt, members])
    return rng.multinomial(members, np.full(members, 1.0 / members), size=replicates).astype(np.float64)


def clustered(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per bootstrap replicate b, the mean of the members' ``values[j, b]`` weighted by
    ``counts[b, j]`` (members × replicates, replicates × members); a member whose value is NaN
    in b (nothing to score there) is left out of that mean, NaN when none is left."""
    finite = np.isfinite(values)
    weights = counts.T * finite
    with np.errstate(invalid="ignore", divide="ignore"):
        total = (np.where(finite, values, 0.0) * weights).sum(axis=0)
        drawn = weights.sum(axis=0)
        return np.where(drawn > 0, total / np.where(drawn > 0, drawn, 1.0), np.nan)


def clustered_intervals(
    stats: Mapping[str, Statistic], rows: list[list[int]], weights: np.ndarray, level: float, seed: int
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``intervals`` for board rows that are each the mean of one or more members (the rows of
    ``stats``): a two-stage bootstrap that resamples the markets (``weights``, shared by every
    row) and, within each replicate, a row's members with replacement (``replicate_draws``), so
    the interval holds the spread between replicates as well as the markets'. The point is the
    mean of the members' points (NaN members left out)."""
    draws = [replicate_draws(len(members), weights.shape[1], seed, salt) for salt, members in enumerate(rows)]
    result = {}
    for (name, stat), replicates in zip(
        stats.items(), _replicated(list(stats.values()), weights), strict=True
    ):
        point = stat.point()
        points, reps = [], []
        for members, counts in zip(rows, draws, strict=True):
            own = point[members]
            points.append(np.nanmean(own) if np.isfinite(own).any() else np.nan)
            reps.append(clustered(replicates[members], counts))
        lo, hi = percentile_interval(np.array(reps).reshape(len(rows), -1), level)
        result[name] = (np.array(points), lo, hi)
    return result


def comparisons(
    stats: Mapping[str, Statistic], leader: int, weights: np.ndarray, level: float
) -> dict[str, dict[str, np.ndarray]]:
    """Each agent against row ``leader``, per statistic, on the markets both took part in.

    Returns per statistic and agent: ``diff`` (agent − leader), its interval ``diff_lo`` /
    ``diff_hi``, ``p_value`` (NaN when the replicated differences do not vary: a bootstrap
    without variance tests nothing), ``wins`` / ``ties`` / ``losses`` (common markets where the
    agent did strictly better, the same, strictly worse), ``share_better`` (``wins`` over the
    common markets: ties are not wins, as ForecastBench's "% more accurate" counts) and
    ``common_markets``. The leader's own row is NaN.
    """
    # Only the leader's markets can be common markets: the products need no other rows of W.
    # Statistics over the same markets (those of one source) share one product over those rows.
    paired = {
        name: _paired(stat, leader, np.flatnonzero(stat.present[leader])) for name, stat in stats.items()
    }
    groups: dict[bytes, list[str]] = {}
    for name, (markets, _, _) in paired.items():
        groups.setdefault(markets.tobytes(), []).append(name)
    replicated: dict[str, list[np.ndarray]] = {}
    for names in groups.values():
        sides = [side for name in names for side in paired[name][1:]]
        values = _replicated(sides, weights[paired[names[0]][0]])
        replicated.update({name: values[2 * i : 2 * i + 2] for i, name in enumerate(names)})
    result = {}
    for name, (_, own, lead) in paired.items():
        own_reps, lead_reps = replicated[name]
        diff = own.point() - lead.point()
        reps = own_reps - lead_reps
        lo, hi = percentile_interval(reps, level)
        wins, ties, losses = _market_outcomes(own, lead)
        common = own.present.sum(axis=1).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(common > 0, wins / np.maximum(common, 1.0), np.nan)
        fields = {
            "diff": diff,
            "diff_lo": lo,
            "diff_hi": hi,
            "p_value": _p_value(diff, reps),
            "wins": wins,
            "ties": ties,
            "losses": losses,
            "share_better": share,
            "common_markets": common,
        }
        nothing_shared = own.present.sum(axis=1) == 0
        for key, values in fields.items():
            values[leader] = np.nan
            if key != "common_markets":
                values[nothing_shared] = np.nan
        result[name] = fields
    return result


def _paired(stat: Statistic, leader: int, markets: np.ndarray) -> tuple[np.ndarray, Statistic, Statistic]:
    """``markets`` (the leader's), and the agents' and the leader's sums over them, each agent's
    row restricted to the markets it shares with the leader."""
    common = stat.present[:, markets] & stat.present[leader, markets]
    mask = common.astype(np.float64)
    own = Statistic(
        stat.num[:, markets] * mask, stat.den[:, markets] * mask, common, stat.higher_is_better, stat.scale
    )
    lead_scale = None if stat.scale is None else np.full(len(stat.scale), stat.scale[leader])
    lead = Statistic(
        stat.num[leader, markets] * mask,
        stat.den[leader, markets] * mask,
        common,
        stat.higher_is_better,
        lead_scale,
    )
    return markets, own, lead


def _p_value(diff: np.ndarray, reps: np.ndarray) -> np.ndarray:
    """The two-sided bootstrap p-value, or NaN where the replicated differences never vary (one
    common market, or two agents scoring alike on every market): such a bootstrap cannot tell a
    difference from chance, and its formula would print 1/(1 + B), "highly significant"."""
    finite = np.isfinite(reps)
    extreme = (np.abs(reps - diff[:, None]) >= np.abs(diff)[:, None]) & finite
    with np.errstate(invalid="ignore"):
        p = (1.0 + extreme.sum(axis=1)) / (1.0 + finite.sum(axis=1))
    return np.where(np.isfinite(diff) & _varies(reps), p, np.nan)


def _varies(reps: np.ndarray) -> np.ndarray:
    """Per row: whether the finite replicates take more than one value."""
    high = np.where(np.isfinite(reps), reps, -np.inf).max(axis=1, initial=-np.inf)
    low = np.where(np.isfinite(reps), reps, np.inf).min(axis=1, initial=np.inf)
    spread: np.ndarray = np.isfinite(high) & (high > low)
    return spread


def _market_outcomes(own: Statistic, lead: Statistic) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per agent, over the markets in common: how many it did strictly better on than the
    leader, how many the same (exactly equal market-level values), how many strictly worse."""
    common = own.present
    scale = own.scale[:, None] if own.scale is not None else None
    lead_scale = lead.scale[:, None] if lead.scale is not None else None
    with np.errstate(invalid="ignore", divide="ignore"):
        mine = own.num / (scale if scale is not None else np.where(own.den > 0, own.den, 1.0))
        theirs = lead.num / (lead_scale if lead_scale is not None else np.where(lead.den > 0, lead.den, 1.0))
    better = (mine > theirs if own.higher_is_better else mine < theirs) & common
    tied = (mine == theirs) & common
    wins, ties = better.sum(axis=1).astype(np.float64), tied.sum(axis=1).astype(np.float64)
    return wins, ties, common.sum(axis=1) - wins - ties
