"""Cohorts side by side: each agent of every cohort against the same agent of the first cohort.

``compare_cohorts(frames, cohorts)`` takes the first cohort as the reference (A) and the others
as B, C, … For every agent seated in the reference and in another cohort it runs
``pairs.paired_comparison`` on the two seats (``pooling.by_cohort`` keeps them apart): the
leaderboard's market-clustered bootstrap, one draw of markets shared by both sides and
restricted to the markets both took part in. The interval of a difference is therefore paired
(each market's difference is what gets resampled: a difference that is the same on every market
has an interval of width 0) and clustered by market (every bet and forecast on a market moves
together). Pool by model with ``pooling.by_model`` first: the agent is then the model identity.

Each compared metric gets a verdict that says what the data can support:

- ``not comparable``: one side has no value (e.g. stated no probability), or no common market;
- ``too few markets``: fewer common resolved markets than ``min_markets`` (at least 2): no
  conclusion, whatever the interval (one market's bootstrap has no variance and proves nothing);
- ``identical``: the same figure on every common market (the paired interval is [0, 0]);
- ``supported``: the interval excludes 0;
- ``within noise``: it does not: no conclusion.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import ascii_uppercase
from typing import Any

import polars as pl

from arena.cohorts.seats import replicated_agent
from arena.scoring.board.pairs import paired_comparison
from arena.scoring.board.ranking import MIN_MARKETS
from arena.scoring.load.frames import Reading, ScoringFrames, suffixed
from arena.scoring.metrics.registry import BY_KEY
from arena.scoring.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_REPLICATES
from arena.scoring.stats.pooling import by_cohort, cohort_label

HEADLINE = ("return_pct", "brier", "stated_brier")  # "brier" is the cohort's headline reading
VERDICTS = ("supported", "within noise", "too few markets", "identical", "not comparable")
SCHEMA: dict[str, pl.DataType] = {
    "cohort": pl.String(),
    "reference": pl.String(),
    "agent": pl.String(),
    "metric": pl.String(),
    "label": pl.String(),
    **{c: pl.Float64() for c in ("reference_value", "value", "diff", "diff_lo", "diff_hi")},
    "common_markets": pl.Int64(),
    "verdict": pl.String(),
    "summary": pl.String(),
}


class ComparisonError(ValueError):
    """Cohorts that cannot be compared: fewer than two, too many, or no market in common."""


@dataclass(frozen=True)
class CohortComparison:
    """What ``compare_cohorts`` found.

    ``cohorts`` (the reference first) and their ``letters`` (A, B, …) as the verdicts name them;
    ``common_markets``: markets every cohort bet or stated on; ``unmatched``: per cohort, its
    agents with no namesake in the reference (or, for the reference, in any other cohort);
    ``rows``: one per (cohort, agent, metric) with ``SCHEMA``'s columns, ``diff`` = cohort −
    reference over the pair's common markets."""

    cohorts: tuple[str, ...]
    letters: tuple[str, ...]
    common_markets: tuple[str, ...]
    unmatched: dict[str, list[str]]
    rows: pl.DataFrame
    min_markets: int
    level: float


def compare_cohorts(
    frames: ScoringFrames,
    cohorts: list[str],
    *,
    seed: int,
    implied: Reading = "fa",
    replicates: int = DEFAULT_REPLICATES,
    level: float = DEFAULT_LEVEL,
    min_markets: int = MIN_MARKETS,
) -> CohortComparison:
    """Each agent of ``cohorts[1:]`` against its namesake in ``cohorts[0]`` (see the module
    docstring); ``implied`` picks the Brier (bets) reading. Raises ``ComparisonError``."""
    cohorts = list(dict.fromkeys(cohorts))
    if min_markets < 2:  # one market's bootstrap never varies: its interval would prove anything
        raise ComparisonError(f"min_markets must be at least 2, got {min_markets}")
    if len(cohorts) < 2:
        raise ComparisonError("compare needs at least two different cohorts")
    if len(cohorts) > len(ascii_uppercase):
        raise ComparisonError(f"compare at most {len(ascii_uppercase)} cohorts at once")
    common = _common_markets(frames, cohorts)
    if not common:
        raise ComparisonError(
            f"cohorts {', '.join(cohorts)} have no market in common: compare cohorts run on the same markets"
        )
    letters = tuple(ascii_uppercase[: len(cohorts)])
    agents = {c: _board_names(frames, c) for c in cohorts}
    labelled = by_cohort(frames, cohorts)
    keys = [suffixed(k, implied) if k == "brier" else k for k in HEADLINE]
    rows = []
    for i, cohort in enumerate(cohorts[1:], start=1):
        for agent in [a for a in agents[cohort] if a in agents[cohorts[0]]]:
            pair = paired_comparison(
                labelled,
                cohort_label(i, agent),
                cohort_label(0, agent),
                seed=seed,
                replicates=replicates,
                level=level,
                min_markets=min_markets,
            )
            for found in pair.filter(pl.col("metric").is_in(keys)).iter_rows(named=True):
                row = {
                    "cohort": cohort,
                    "reference": cohorts[0],
                    "agent": agent,
                    "metric": found["metric"],
                    "label": BY_KEY[found["metric"]].label,
                    "reference_value": found["second"],
                    "value": found["first"],
                    **{k: found[k] for k in ("diff", "diff_lo", "diff_hi", "common_markets")},
                }
                verdict = _verdict(row, bool(found["few_markets"]))
                rows.append(
                    row | {"verdict": verdict, "summary": summary(row, verdict, letters[i], min_markets)}
                )
    matched = {a for c in cohorts[1:] for a in agents[c] if a in agents[cohorts[0]]}
    unmatched = {c: [a for a in agents[c] if a not in matched] for c in cohorts}
    return CohortComparison(
        tuple(cohorts), letters, common, unmatched, pl.DataFrame(rows, schema=SCHEMA), min_markets, level
    )


def _common_markets(frames: ScoringFrames, cohorts: list[str]) -> tuple[str, ...]:
    """Markets every cohort of ``cohorts`` bet or stated a probability on, sorted."""
    touched = pl.concat(
        [frames.fills.select("cohort_id", "market_id"), frames.forecasts.select("cohort_id", "market_id")]
    )
    sets = [set(touched.filter(pl.col("cohort_id") == c)["market_id"].to_list()) for c in cohorts]
    return tuple(sorted(set.intersection(*sets)))


def _board_names(frames: ScoringFrames, cohort: str) -> list[str]:
    """The cohort's agents as the board names them (a replicated agent once), in seat order."""
    seats = frames.agents.filter(pl.col("cohort_id") == cohort)["agent"].to_list()
    return list(dict.fromkeys(replicated_agent(s) or s for s in seats))


def _verdict(row: dict[str, Any], few: bool) -> str:
    diff, lo, hi = row["diff"], row["diff_lo"], row["diff_hi"]
    if diff is None or lo is None or hi is None or not row["common_markets"]:
        return "not comparable"
    if few:
        return "too few markets"
    if lo == hi == diff == 0:
        return "identical"
    return "supported" if lo > 0 or hi < 0 else "within noise"


def summary(row: dict[str, Any], verdict: str, letter: str, min_markets: int) -> str:
    """The verdict as one sentence, e.g. "B's Brier (bets) is lower by 0.031 [0.004, 0.058] over
    41 common markets: supported"."""
    label, n = str(row["label"]), row["common_markets"]
    markets = f"{n} common market" + ("" if n == 1 else "s")
    if verdict == "not comparable":
        if row["value"] is None or row["reference_value"] is None:
            return f"{label}: not measured in both cohorts: nothing to compare"
        return f"{label}: no common market: nothing to compare"
    if verdict == "too few markets":
        return f"{label}: only {markets} (at least {min_markets} resolved ones needed): no conclusion"
    if verdict == "identical":
        return f"{label}: the same on all {markets}: no difference"
    diff, lo, hi = float(row["diff"]), float(row["diff_lo"]), float(row["diff_hi"])
    places, unit = (2, " points") if BY_KEY[str(row["metric"])].fmt == "percent" else (3, "")
    if verdict == "within noise":
        shown = f"{diff:+.{places}f} [{lo:+.{places}f}, {hi:+.{places}f}]{unit}"
        return f"{label}: difference {shown} within noise over {markets}: no conclusion"
    way = "higher" if diff > 0 else "lower"
    low, high = (lo, hi) if diff > 0 else (-hi, -lo)
    shown = f"{abs(diff):.{places}f} [{low:.{places}f}, {high:.{places}f}]{unit}"
    return f"{letter}'s {label} is {way} by {shown} over {markets}: supported"
