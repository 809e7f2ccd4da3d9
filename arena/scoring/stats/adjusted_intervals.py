"""Bootstrap intervals of the difficulty-adjusted Brier: the fixed effects refitted per replicate.

Each replicate of the leaderboard's market-clustered bootstrap (the same weights ``W`` as every
other interval) weighs the panel's markets by how often it drew them; the panel's fixed effects
are refitted with those weights (``arena.scoring.rules.difficulty.skills``: weighted least
squares, all replicates in batches) and each agent's ``a_i + b̄`` recomputed. A replicate that
drew none of an agent's markets is skipped for it, as for a mean.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from arena.scoring.rules.difficulty import adjusted, design, skills
from arena.scoring.stats.bootstrap import percentile_interval


def adjusted_interval(
    cells: pl.DataFrame, agents: list[str], markets: list[str], weights: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per agent of ``agents``: the percentile interval of its adjusted Brier (NaN if not fitted).

    ``weights`` is the bootstrap's ``W`` (markets × replicates) over ``markets``, which hold every
    market of the panel."""
    lo, hi = np.full(len(agents), np.nan), np.full(len(agents), np.nan)
    shape = design(cells)
    if shape is None or not shape.agents:
        return lo, hi
    index = {m: k for k, m in enumerate(markets)}
    drawn = weights[[index[m] for m in shape.markets]].T  # replicates × the panel's markets
    replicates = adjusted(shape, skills(shape, drawn), drawn)
    panel_lo, panel_hi = percentile_interval(replicates.T, level)
    row = {a: i for i, a in enumerate(shape.agents)}
    for k, agent in enumerate(agents):
        if agent in row:
            lo[k], hi[k] = panel_lo[row[agent]], panel_hi[row[agent]]
    return lo, hi
