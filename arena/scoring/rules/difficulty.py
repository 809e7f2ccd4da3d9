"""Difficulty-adjusted Brier: question fixed effects on the pooled (forecaster, market) Brier scores.

Raw means reward whoever drew easy markets (cohorts that offered different markets, agents that
bet on different ones). As ForecastBench's leaderboard does, each (forecaster i, market j) cell's
Brier is modelled as ``brier_ij = a_i + b_j + e_ij``: a forecaster's skill ``a_i`` and a market's
difficulty ``b_j``, fitted by least squares (statsmodels OLS; ``fit_panel``). An agent's
difficulty-adjusted Brier is ``a_i + b̄``, b̄ the mean of ``b_j`` over the panel's markets: what it
would score on the panel's average market. Over markets every forecaster scored it equals the raw
mean exactly, so it only moves agents whose markets differ.

The panel, per source (``PANELS``: stated forecasts as stated; each bet reading):

- a cell is the mean Brier of the agent's scored events (or resolved bets) on one market, so each
  market weighs once per agent, however many outcomes or bets it holds;
- the market itself is a forecaster of the panel, the *reference*: its Brier on each market (the
  prices offered in the cohorts' rounds for stated forecasts, the fill prices of the bets for bet
  readings). It answers every market, so the panel is connected: every agent is compared with the
  others through the reference, even one whose markets nobody else forecast. A market without a
  reference price is left out of the panel;
- a market forecast by one agent only (with the reference) still tells its ``a_i`` against the
  reference; with no other forecaster at all it would fit its cell exactly and tell nothing.

Only a leaderboard that pools cohorts is adjusted: within one cohort every agent was offered the
same markets, and which of them it chose is what the imputed stated reading scores. Not fitted
(the score is null, ``*_why`` says why, to an agent with a raw score): one cohort; a panel of
fewer than ``MIN_MARKETS`` markets; an agent with no scored market that has a reference price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from arena.scoring.load.frames import READINGS, Reading, ScoringFrames, suffixed
from arena.scoring.rules.imputed import resolved_offers
from arena.scoring.rules.scores import brier
from arena.scoring.rules.sums import fmean

REFERENCE = "\x00market"  # the market as a forecaster: a name no agent can have
MIN_MARKETS = 2
ONE_COHORT = "one cohort: its agents were offered the same markets (adjusted when cohorts are pooled)"
BATCH_CELLS = 4_000_000  # markets × agent pairs held at once by ``skills``
Panel = Literal["stated", "fa", "kelly"]  # stated forecasts, or a bet reading
PANELS: tuple[Panel, ...] = ("stated", *READINGS)
CELL = {"forecaster": pl.String, "market_id": pl.String, "brier": pl.Float64}


def reading_of(panel: Panel) -> Reading | None:
    """The bet reading a panel scores, or None for stated forecasts."""
    return None if panel == "stated" else panel


def adjusted_key(panel: Panel) -> str:
    """The metric of a panel: ``stated_brier_adjusted``, ``brier_adjusted``, ``brier_adjusted_kelly``."""
    reading = reading_of(panel)
    return "stated_brier_adjusted" if reading is None else suffixed("brier_adjusted", reading)


def why_key(panel: Panel) -> str:
    """The metric saying why an agent's adjusted score of ``panel`` is missing."""
    reading = reading_of(panel)
    return "stated_brier_adjusted_why" if reading is None else suffixed("brier_adjusted_why", reading)


def stated_cells(events: pl.DataFrame, frames: ScoringFrames) -> pl.DataFrame:
    """Per (agent, market) the mean Brier of its stated events; per market the offered prices' Brier."""
    cells = _cells(events.select("agent", "market_id", "brier"))
    offers = resolved_offers(frames).select("market_id", brier=brier(pl.col("price"), pl.col("y")))
    return _with_reference(cells, offers)


def bet_cells(bets: pl.DataFrame, reading: Reading) -> pl.DataFrame:
    """Per (agent, market) the mean Brier of its resolved bets in ``reading``; per market the
    fill prices' Brier over every bet on it."""
    scored = bets.filter(pl.col("scored"))
    cells = _cells(scored.select("agent", "market_id", brier=suffixed("brier", reading)))
    return _with_reference(cells, scored.select("market_id", brier="brier_market"))


def _cells(rows: pl.DataFrame) -> pl.DataFrame:
    return (
        rows.rename({"agent": "forecaster"})
        .group_by("forecaster", "market_id", maintain_order=True)
        .agg(fmean(pl.col("brier")).alias("brier"))
        .cast(CELL)  # type: ignore[arg-type]
    )


def _with_reference(cells: pl.DataFrame, market_rows: pl.DataFrame) -> pl.DataFrame:
    """The agents' cells on markets with a reference price, and the reference's cell on each."""
    reference = (
        market_rows.join(cells.select("market_id").unique(), on="market_id", how="semi")
        .sort("market_id", maintain_order=True)
        .group_by("market_id", maintain_order=True)
        .agg(fmean(pl.col("brier")).alias("brier"))
        .select(forecaster=pl.lit(REFERENCE), market_id="market_id", brier="brier")
        .cast(CELL)  # type: ignore[arg-type]
    )
    kept = cells.join(reference.select("market_id"), on="market_id", how="semi")
    return pl.concat([kept, reference]).sort("forecaster", "market_id")


@dataclass(frozen=True)
class Design:
    """A fitted panel's shape: ``agents`` (the reference left out), ``markets``, and per (agent,
    market) ``present``; ``centred`` holds each cell's Brier minus its market's mean, ``means`` the
    market means, ``counts`` the forecasters per market (the reference included)."""

    agents: list[str]
    markets: list[str]
    present: np.ndarray  # agents × markets, 0/1
    centred: np.ndarray  # agents × markets; the reference's centred cells are implied (they sum to 0)
    means: np.ndarray  # markets
    counts: np.ndarray  # markets


def design(cells: pl.DataFrame) -> Design | None:
    """The panel's matrices, or None when it holds fewer than ``MIN_MARKETS`` markets."""
    markets = sorted(set(cells["market_id"]))
    if len(markets) < MIN_MARKETS:
        return None
    agents = sorted(set(cells["forecaster"]) - {REFERENCE})
    by_market = cells.group_by("market_id").agg(mean=fmean(pl.col("brier")), n=pl.len())
    centred = cells.join(by_market, on="market_id").with_columns(centred=pl.col("brier") - pl.col("mean"))
    index = {m: k for k, m in enumerate(markets)}
    row = {a: i for i, a in enumerate(agents)}
    present = np.zeros((len(agents), len(markets)))
    values = np.zeros((len(agents), len(markets)))
    for forecaster, market, value in centred.select("forecaster", "market_id", "centred").iter_rows():
        if forecaster != REFERENCE:
            present[row[forecaster], index[market]] = 1.0
            values[row[forecaster], index[market]] = value
    stats = dict(
        zip(by_market["market_id"], zip(by_market["mean"], by_market["n"], strict=True), strict=True)
    )
    means = np.array([stats[m][0] for m in markets])
    counts = np.array([float(stats[m][1]) for m in markets])
    return Design(agents, markets, present, values, means, counts)


def fit_panel(cells: pl.DataFrame) -> dict[str, float]:
    """Each agent's adjusted Brier ``a_i + b̄``, by ordinary least squares (statsmodels).

    Within markets (the Frisch–Waugh–Lovell form of ``brier ~ C(market) + C(forecaster)``): the
    cells and the agents' indicators are centred on their market's mean, and OLS of one on the
    other gives each agent's ``a_i`` against the reference (``a = 0``); then ``b_j`` is the mean
    over market j's forecasters of ``brier_ij − a_i``. Agents absent from the panel are absent here.
    """
    shape = design(cells)
    if shape is None or not shape.agents:
        return {}
    # Here, not at the top: statsmodels (with scipy and pandas) costs a second of start-up, which
    # only a leaderboard with a panel to fit pays.
    from statsmodels.regression.linear_model import OLS

    agent_of, market_of = np.nonzero(shape.present)
    share = shape.present.T / shape.counts[:, None]  # markets × agents: 1/n_j where i scored j
    # An agent's cell: its indicator minus its market's mean indicator; the reference's cell (its
    # indicator 0: the base level) likewise, its centred Brier the negative sum of the others'.
    exog = np.vstack([-share[market_of] + np.eye(len(shape.agents))[agent_of], -share])
    endog = np.concatenate([shape.centred[agent_of, market_of], -shape.centred.sum(axis=0)])
    skill = np.asarray(OLS(endog, exog).fit(method="qr").params)[None, :]
    values = adjusted(shape, skill, np.ones((1, len(shape.markets))))[0]
    return dict(zip(shape.agents, values.tolist(), strict=True))


def adjusted(shape: Design, skill: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``a_i + b̄`` per (replicate, agent) from skills ``a`` (replicates × agents) and each
    replicate's market weights (replicates × markets): b_j = market mean − mean of its forecasters'
    ``a`` (the reference's is 0), b̄ their weighted mean."""
    # An agent without a drawn market (NaN) weighs nothing here: its markets all weigh 0.
    difficulty = shape.means[None, :] - (np.nan_to_num(skill) @ shape.present) / shape.counts[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_b = (difficulty * weights).sum(axis=1) / weights.sum(axis=1)
    result: np.ndarray = skill + mean_b[:, None]
    return result


def skills(shape: Design, weights: np.ndarray) -> np.ndarray:
    """``a`` per (replicate, agent) for market weights (replicates × markets): the weighted least
    squares solution through its normal equations, ``G(w) a = r(w)`` with ``G(w) = diag(A w) −
    A diag(w / n) Aᵀ`` and ``r(w) = C w`` (A the presence, C the centred cells, n the forecasters
    per market). It equals statsmodels' WLS on the cells with each market's weight
    (``tests/scoring/test_difficulty.py``). Every replicate's ``G`` comes from one matrix product
    over the agent pairs sharing markets (in column blocks of bounded size), then one batched
    solve. An agent with no weighted market is NaN in that replicate."""
    agents = len(shape.agents)
    first, second = np.triu_indices(agents)
    per_market = weights / shape.counts[None, :]  # replicates × markets
    gram = np.empty((len(weights), agents, agents))
    block = max(1, BATCH_CELLS // max(1, len(shape.markets)))
    for start in range(0, len(first), block):
        i, k = first[start : start + block], second[start : start + block]
        shared = (shape.present[i] * shape.present[k]).T  # markets × pairs: both scored the market
        values = -(per_market @ shared)
        gram[:, i, k] = values
        gram[:, k, i] = values
    load = weights @ shape.present.T  # replicates × agents: the weight on each agent's markets
    idle = load <= 0  # no market drawn: a decoupled row, solved as 0 and reported NaN
    diagonal = np.arange(agents)
    gram[:, diagonal, diagonal] += load + idle
    solved = np.linalg.solve(gram, (weights @ shape.centred.T)[..., None])[..., 0]
    return np.where(idle, np.nan, solved)


def reasons(
    cells: pl.DataFrame, raw_agents: list[str], fitted: dict[str, float], *, pooled: bool
) -> dict[str, str]:
    """Why an agent has no adjusted score, for each agent of ``raw_agents`` not in ``fitted``."""
    markets = cells["market_id"].n_unique()
    in_panel = set(cells["forecaster"])
    why = {}
    for agent in raw_agents:
        if agent in fitted:
            continue
        if not pooled:
            why[agent] = ONE_COHORT
        elif markets < MIN_MARKETS:
            why[agent] = f"too few markets to estimate difficulty: {markets} (at least {MIN_MARKETS})"
        elif agent not in in_panel:
            why[agent] = "no scored market with a market price to compare with (the reference)"
    return why
