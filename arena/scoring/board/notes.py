"""Footnotes every leaderboard prints when an agent's Brier label and return label disagree.

One wording, used by the JSON (``footnotes``), the CLI table, the report and the dashboard, so
they cannot say different things. When it fires, see ``arena.scoring.metrics.labels.disagree``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from arena.scoring.load.frames import READINGS, Reading, suffixed
from arena.scoring.metrics.labels import brier_label, return_label
from arena.scoring.metrics.registry import BY_KEY


def label_notes(table: pl.DataFrame | Iterable[Mapping[str, Any]], implied: Reading) -> list[str]:
    """One sentence per (agent, reading) whose implied Brier and return point opposite ways."""
    rows = table.iter_rows(named=True) if isinstance(table, pl.DataFrame) else table
    notes = []
    for row in rows:
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


def _word(rule: Any, value: float) -> str:
    return str(pl.select(rule(pl.lit(value))).item())
