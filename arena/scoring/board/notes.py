"""Footnotes and flags every leaderboard shows: labels that disagree, figures that cannot be read
as skill for an agent (a bet reading contradicting its bets, selective statements, a hidden price
seen), a tournament pool that only one agent covered.

One wording, used by the JSON (``footnotes``), the CLI table, the report and the dashboard, so
they cannot say different things. A flag's note lists its agents after a colon, each as
``name (figures)``, separated by semicolons. ``marked_notes`` gives every note with the sign the CLI puts
on its agent's row (``FLAGS``); ``leaderboard_notes`` the sentences alone, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from arena.scoring.load.frames import READINGS, Reading, suffixed
from arena.scoring.metrics.families import INCOHERENT_LIMIT
from arena.scoring.metrics.labels import brier_label, return_label
from arena.scoring.metrics.registry import BY_KEY, SELECTIVE_LIMIT
from arena.scoring.rules.imputed import HIDDEN_LIMIT

Rows = pl.DataFrame | Iterable[Mapping[str, Any]]
Row = Mapping[str, Any]
CONFLICT_MARK = "§"


@dataclass(frozen=True)
class Flag:
    """A flag metric that says some figures cannot be read as skill: its sign and its words."""

    column: str
    mark: str
    words: str  # on the agent's row (dashboard status, report flags, charts)
    legend: str  # what the sign means, under a table
    note: Callable[[list[Row]], str]  # one note for every agent the flag concerns


def _rows(table: Rows) -> list[Row]:
    return list(table.iter_rows(named=True) if isinstance(table, pl.DataFrame) else table)


def _incoherent(reading: Reading) -> Callable[[list[Row]], str]:
    def note(rows: list[Row]) -> str:
        brier, share = suffixed("brier", reading), suffixed("incoherent_share", reading)
        each = "; ".join(f"{row['agent']} ({row[brier]:.3f}, {row[share]:.0%})" for row in rows)
        return (
            f"{BY_KEY[brier].label} in the {reading} reading reads at least "
            f"{INCOHERENT_LIMIT:.0%} of these agents' resolved bets as less likely than the price paid "
            f"(Brier, share of bets): {each}. Nobody buys at 0.85 what they believe 20% likely: the "
            "reading contradicts these bets, so these Briers, their labels and their skill scores say "
            "nothing about them. Read the return and the other reading."
        )

    return note


def _selective(rows: list[Row]) -> str:
    each = "; ".join(f"{row['agent']} ({row['unstated_share']:.0%})" for row in rows)
    return (
        f"Stated selectively (flagged above {SELECTIVE_LIMIT:.0%}), no forecast standing on this share "
        f"of the rounds and markets that showed them a price: {each}. Their as-stated scores (Brier "
        "(stated), log score) average only what they chose to state; the imputed reading scores them "
        "on everything offered."
    )


def _hidden_price(rows: list[Row]) -> str:
    each = "; ".join(f"{row['agent']} ({row['hidden_price_share']:.0%})" for row in rows)
    return (
        f"Stated the very price their round hid, in this share of their statements there (flagged "
        f"from {HIDDEN_LIMIT:.0%}): {each}. The price reached them some other way, so their tournament "
        "and stated standings say nothing about forecasting."
    )


FLAGS: tuple[Flag, ...] = (
    *(
        Flag(
            suffixed("brier_incoherent", r),
            "¶",
            f"bets read incoherently ({r})",
            "a bet reading contradicts the bets",
            _incoherent(r),
        )
        for r in READINGS
    ),
    Flag("stated_selective", "¤", "stated selectively", "stated selectively", _selective),
    Flag("hidden_price_seen", "!", "hidden price seen", "stated prices it was not shown", _hidden_price),
)
LEGEND = "   ".join(dict.fromkeys(f"{flag.mark} {flag.legend}" for flag in FLAGS))
"""What each flag's sign means, in one line."""
BY_COLUMN: dict[str, Flag] = {flag.column: flag for flag in FLAGS}


def flags_of(row: Row) -> list[Flag]:
    """The flags an agent's row carries, in ``FLAGS`` order."""
    return [flag for flag in FLAGS if row.get(flag.column)]


def marked_notes(table: Rows, implied: Reading) -> list[tuple[str, str]]:
    """Every footnote with its sign: label conflicts (§), then one note per flag that some agent
    carries, naming each such agent, then a lone tournament (no sign: it concerns the pool)."""
    rows = _rows(table)
    notes = [(CONFLICT_MARK, note) for note in label_notes(rows, implied)]
    for flag in FLAGS:
        flagged = [row for row in rows if row.get(flag.column)]
        if flagged:
            notes.append((flag.mark, flag.note(flagged)))
    return notes + [("", note) for note in tournament_notes(rows)]


def leaderboard_notes(table: Rows, implied: Reading) -> list[str]:
    """Every footnote of a leaderboard (``marked_notes`` without the signs)."""
    return [note for _, note in marked_notes(table, implied)]


def label_notes(table: Rows, implied: Reading) -> list[str]:
    """One sentence per reading that some agent's implied Brier and return point opposite ways,
    naming each such agent with both figures (one line per reading, however many agents)."""
    rows = _rows(table)
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


def chart_flags(table: Rows, metric: str) -> dict[str, str]:
    """Agent → its flags' signs and words, for a chart of ``metric``: the flags that say ``metric``
    cannot be read as skill for that agent (``Metric.demoted_by``), none for other metrics."""
    flags = [BY_COLUMN[column] for column in BY_KEY[metric].demoted_by]
    shown = {}
    for row in _rows(table):
        carried = [f"{flag.mark} {flag.words}" for flag in flags if row.get(flag.column)]
        if carried:
            shown[row["agent"]] = ", ".join(carried)
    return shown


def tournament_notes(table: Rows) -> list[str]:
    """A sentence when only one agent covered the tournament: it was paid against the reference."""
    covered = [row for row in _rows(table) if (row.get("coverage") or 0.0) > 0]
    if len(covered) != 1:
        return []
    alone = covered[0]
    return [
        f"Tournament: one agent alone, {alone['agent']}, has coverage, so there was no contest to split: "
        "it is paid what it would take against the reference itself (which covers every question, S = 1), "
        f"S / (S + 1) = {alone['tournament_take']:.1%} of the pool (s = {alone['tournament_score']:+.2f}, "
        f"c = {alone['coverage']:.2f}); the rest is not paid."
    ]


def _word(rule: Any, value: float) -> str:
    return str(pl.select(rule(pl.lit(value))).item())
