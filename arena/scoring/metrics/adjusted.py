"""The difficulty-adjusted Brier metrics: one per panel (stated forecasts, each bet reading).

Each is the panel's fixed-effects fit (``arena.scoring.rules.difficulty``): a point value per
agent here, its market-clustered bootstrap interval in ``arena.scoring.stats.intervals``, and a
``*_why`` text for an agent that has a raw score but no adjusted one.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from arena.scoring.load.frames import READINGS, suffixed
from arena.scoring.metrics.inputs import Inputs
from arena.scoring.metrics.spec import RANDOM_BRIER, FixedEffects, Metric
from arena.scoring.rules.difficulty import (
    PANELS,
    Panel,
    adjusted_key,
    fit_panel,
    reading_of,
    reasons,
    why_key,
)


def _scored_agents(inputs: Inputs, panel: Panel) -> list[str]:
    """The agents with a raw score in ``panel``: stated events, or resolved bets."""
    rows = inputs.events if panel == "stated" else inputs.bets.filter(pl.col("scored"))
    return sorted(set(rows["agent"]))


def adjusted_metrics(inputs: Inputs) -> pl.DataFrame:
    """Per agent and panel: the adjusted Brier, or null and why."""
    agents: list[str] = sorted(set(inputs.frames.agents["agent"]))
    columns: dict[str, list[object]] = {"agent": list(agents)}
    for panel in PANELS:
        cells = inputs.difficulty_cells[panel]
        fitted = fit_panel(cells)
        why = reasons(cells, _scored_agents(inputs, panel), fitted, pooled=inputs.pooled)
        columns[adjusted_key(panel)] = [fitted.get(a) for a in agents]
        columns[why_key(panel)] = [why.get(a) for a in agents]
    schema = {"agent": pl.String} | {
        key: pl.Float64 if key == adjusted_key(p) else pl.String
        for p in PANELS
        for key in (adjusted_key(p), why_key(p))
    }
    return pl.DataFrame(columns, schema=schema)


def adjusted_family(panel: Panel) -> Iterator[Metric]:
    """The adjusted Brier of ``panel`` and the reason it is missing."""
    reading = reading_of(panel)
    raw = "stated_brier" if reading is None else suffixed("brier", reading)
    yield Metric(
        adjusted_key(panel),
        "Brier (stated, adjusted)" if reading is None else "Brier (bets, adjusted)",
        f"{raw} adjusted for market difficulty: a_i + mean b_j of brier_ij = a_i + b_j + e_ij over the "
        "pooled (agent, market) cells, the market as reference forecaster",
        "score",
        better="lower",
        interval=True,
        reading=reading,
        reference=RANDOM_BRIER,
        per_agent=adjusted_metrics,
        bootstrap=FixedEffects(panel),
    )
    yield Metric(
        why_key(panel),
        "Why not adjusted" + ("" if reading is None else " (bets)"),
        f"why {adjusted_key(panel)} is missing for an agent with a {raw} (null otherwise)",
        "text",
        reading=reading,
        per_agent=adjusted_metrics,
    )


def bet_adjusted_metrics() -> tuple[Metric, ...]:
    return tuple(m for reading in READINGS for m in adjusted_family(reading))
