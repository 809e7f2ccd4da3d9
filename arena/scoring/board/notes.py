"""Footnotes every leaderboard prints: labels that disagree, readings that contradict their bets,
a tournament pool that only one agent covered.

One wording, used by the JSON (``footnotes``), the CLI table, the report and the dashboard, so
they cannot say different things. ``leaderboard_notes`` gives all of them in that order; each
kind also stands alone, for views that mark it with a sign of its own (the CLI's §, ¶).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from arena.scoring.load.frames import READINGS, Reading, suffixed
from arena.scoring.metrics.families import INCOHERENT_LIMIT
from arena.scoring.metrics.labels import brier_label, return_label
from arena.scoring.metrics.registry import BY_KEY

Rows = pl.DataFrame | Iterable[Mapping[str, Any]]


def _rows(table: Rows) -> list[Mapping[str, Any]]:
    return list(table.iter_rows(named=True) if isinstance(table, pl.DataFrame) else table)


def leaderboard_notes(table: Rows, implied: Reading) -> list[str]:
    """Every footnote of a leaderboard: label conflicts, incoherent readings, a lone tournament."""
    rows = _rows(table)
    return [*label_notes(rows, implied), *incoherence_notes(rows, implied), *tournament_notes(rows)]


def label_notes(table: Rows, implied: Reading) -> list[str]:
    """One sentence per (agent, reading) whose implied Brier and return point opposite ways."""
    notes = []
    for row in _rows(table):
        conflicting = (row.get("label_conflict") or "").split(", ")
        notes += [_note(row, reading, implied) for reading in READINGS if reading in conflicting]
    return notes


def _note(row: Mapping[str, Any], reading: Reading, implied: Reading) -> str:
    brier, ret = row[suffixed("brier", reading)], row["return_pct"]
    label = BY_KEY[suffixed("brier", reading)].display_label(implied)
    return (
        f"{row['agent']}: {label} {brier:.3f} reads {_word(brier_label, brier)} but its return "
        f"{ret:+.1f}% reads {_word(return_label, ret)}. The bet-implied Brier scores bet sizes read "
        f"as forecasts ({reading} reading), not profit: read it beside the return and the other reading."
    )


def incoherence_notes(table: Rows, implied: Reading) -> list[str]:
    """One sentence per (agent, reading) flagged ``brier_incoherent``: why its Brier says nothing."""
    notes = []
    for row in _rows(table):
        for reading in READINGS:
            if row.get(suffixed("brier_incoherent", reading)):
                notes.append(_incoherent(row, reading, implied))
    return notes


def _incoherent(row: Mapping[str, Any], reading: Reading, implied: Reading) -> str:
    label = BY_KEY[suffixed("brier", reading)].display_label(implied)
    share = row[suffixed("incoherent_share", reading)]
    return (
        f"{row['agent']}: {label} {row[suffixed('brier', reading)]:.3f} reads {share:.0%} of its "
        f"resolved bets as less likely than the price paid ({reading} reading; flagged from "
        f"{INCOHERENT_LIMIT:.0%}). Nobody buys at 0.85 what they believe 20% likely: the reading "
        "contradicts these bets, so this Brier, its label and its skill scores say nothing about "
        "them. Read the return and the other reading."
    )


def chart_flags(table: Rows, metric: str) -> dict[str, str]:
    """Agent → "¶ incoherent" for a chart of ``metric`` when it reads bets in a reading that
    contradicts those agents' bets (no flags for any other metric)."""
    reading = BY_KEY[metric].reading
    if reading is None:
        return {}
    flag = suffixed("brier_incoherent", reading)
    return {row["agent"]: "¶ incoherent" for row in _rows(table) if row.get(flag)}


def tournament_notes(table: Rows) -> list[str]:
    """A sentence when only one agent covered the tournament: it was paid against the reference."""
    covered = [row for row in _rows(table) if (row.get("coverage") or 0.0) > 0]
    if len(covered) != 1:
        return []
    alone = covered[0]
    return [
        f"Tournament: only {alone['agent']} has coverage, so there was no contest to split: it is "
        "paid what it would take against the reference itself (which covers every question, S = 1), "
        f"S / (S + 1) = {alone['tournament_take']:.1%} of the pool (s = {alone['tournament_score']:+.2f}, "
        f"c = {alone['coverage']:.2f}); the rest is not paid."
    ]


def _word(rule: Any, value: float) -> str:
    return str(pl.select(rule(pl.lit(value))).item())
