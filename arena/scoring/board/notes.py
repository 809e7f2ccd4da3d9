"""Footnotes every leaderboard prints when agents' Brier labels and return labels disagree.

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
    """One sentence per reading that some agent's implied Brier and return point opposite ways,
    naming each such agent with both figures (one line per reading, however many agents)."""
    rows = list(table.iter_rows(named=True) if isinstance(table, pl.DataFrame) else table)
    notes = []
    for reading in READINGS:
        agents = [row for row in rows if reading in (row.get("label_conflict") or "").split(", ")]
        if agents:
            notes.append(_note(agents, reading, implied))
    return notes


def _note(rows: list[Mapping[str, Any]], reading: Reading, implied: Reading) -> str:
    label = BY_KEY[suffixed("brier", reading)].display_label(implied)
    each = "; ".join(_pair(row, reading) for row in rows)
    return (
        f"{label} and return disagree: {each}. The bet-implied Brier scores bet sizes read as "
        f"forecasts ({reading} reading), not profit: read it beside the return and the other reading."
    )


def _pair(row: Mapping[str, Any], reading: Reading) -> str:
    brier, ret = row[suffixed("brier", reading)], row["return_pct"]
    return (
        f"{row['agent']} {brier:.3f} reads {_word(brier_label, brier)}, "
        f"return {ret:+.1f}% reads {_word(return_label, ret)}"
    )


def _word(rule: Any, value: float) -> str:
    return str(pl.select(rule(pl.lit(value))).item())
