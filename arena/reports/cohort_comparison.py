"""Comparing cohorts, as `arena compare` and the dashboard's "Compare cohorts" page show it.

``load_comparison`` is the one way both get a comparison: it checks the ids, loads the cohorts'
frames (pooled by model on request) and runs ``arena.scoring.board.cohort_diff.compare_cohorts``
with the reference cohort's bootstrap seed and Brier reading. ``comparison_document`` is the
``--json`` form; ``display_table`` the table both print, one row per agent and metric.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl
from sqlalchemy import Connection, Engine

from arena.reports.formatting import MISSING
from arena.scoring import load_frames
from arena.scoring.board.cohort_diff import CohortComparison, ComparisonError, compare_cohorts
from arena.scoring.board.ranking import MIN_MARKETS
from arena.scoring.load.cohort_choice import choose_cohorts
from arena.scoring.load.database import cohort_scoring, model_identities
from arena.scoring.metrics.registry import BY_KEY
from arena.scoring.stats.bootstrap import DEFAULT_REPLICATES
from arena.scoring.stats.pooling import PoolBy, by_model

__all__ = ["CohortComparison", "ComparisonError", "comparison_document", "display_table", "load_comparison"]


def load_comparison(
    bind: Engine | Connection,
    cohort_ids: Sequence[str],
    *,
    pool_by: PoolBy = "name",
    seed: int | None = None,
    replicates: int = DEFAULT_REPLICATES,
    min_markets: int = MIN_MARKETS,
) -> CohortComparison:
    """Every cohort of ``cohort_ids`` against the first (see ``cohort_diff``). ``seed`` defaults
    to the first cohort's. Raises ``LoadError`` for an unknown or unscorable cohort and
    ``ComparisonError`` for fewer than two cohorts or no market in common."""
    ids = list(dict.fromkeys(cohort_ids))
    if ids:
        choose_cohorts(bind, ids)  # an unknown id, named in one line
    if len(ids) < 2:
        raise ComparisonError("compare needs at least two different cohort ids (see `arena cohort list`)")
    frames = load_frames(bind, ids)
    if pool_by == "model":
        frames = by_model(frames, model_identities(bind, ids))
    reference = cohort_scoring(bind, ids[:1])
    return compare_cohorts(
        frames,
        ids,
        seed=reference.seed if seed is None else seed,
        implied=reference.implied,
        replicates=replicates,
        min_markets=min_markets,
    )


def comparison_document(comparison: CohortComparison) -> dict[str, Any]:
    """The ``arena compare --json`` document (keys in docs/cli.md)."""
    return {
        "cohorts": [
            {
                "letter": letter,
                "id": cohort,
                "reference": i == 0,
                "unmatched_agents": comparison.unmatched[cohort],
            }
            for i, (letter, cohort) in enumerate(zip(comparison.letters, comparison.cohorts, strict=True))
        ],
        "common_markets": list(comparison.common_markets),
        "min_markets": comparison.min_markets,
        "level": comparison.level,
        "comparisons": comparison.rows.to_dicts(),
    }


def display_table(comparison: CohortComparison) -> pl.DataFrame:
    """One row per (cohort, agent, metric), as text: ``agent``, ``cohort`` (its letter),
    ``metric``, ``reference`` (A's value), ``value``, ``difference`` with its ``interval``,
    ``markets`` (common to the pair), ``verdict`` and the verdict's sentence ``reading``."""
    letter = dict(zip(comparison.cohorts, comparison.letters, strict=True))
    rows = []
    for r in comparison.rows.iter_rows(named=True):
        show = shown(r["metric"])
        rows.append(
            {
                "agent": r["agent"],
                "cohort": letter[r["cohort"]],
                "metric": r["label"],
                "reference": show(r["reference_value"], signed=False),
                "value": show(r["value"], signed=False),
                "difference": show(r["diff"]),
                "interval": MISSING
                if r["diff_lo"] is None
                else f"[{show(r['diff_lo'])}, {show(r['diff_hi'])}]",
                "markets": r["common_markets"],
                "verdict": r["verdict"],
                "reading": r["summary"],
            }
        )
    schema = dict.fromkeys(DISPLAY, pl.String()) | {"markets": pl.Int64()}
    return pl.DataFrame(rows, schema=schema)


DISPLAY = (
    "agent",
    "cohort",
    "metric",
    "reference",
    "value",
    "difference",
    "interval",
    "markets",
    "verdict",
    "reading",
)


def shown(metric: str) -> Callable[..., str]:
    """How ``metric``'s values read in a comparison: a percent to 2 places, a score to 3; a
    difference signed; a missing value as an em dash."""
    places = 2 if BY_KEY[metric].fmt == "percent" else 3

    def show(value: float | None, *, signed: bool = True) -> str:
        if value is None:
            return MISSING
        value = round(value, places) + 0.0  # no "-0.000" for a difference that rounds to nothing
        return f"{value:+.{places}f}" if signed else f"{value:.{places}f}"

    return show
