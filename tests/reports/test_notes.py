"""The footnotes every leaderboard view prints, from leaderboard rows."""

from __future__ import annotations

from arena.reports.notes import IMPUTED_NOTE, stated_notes


def _row(agent: str, open_events: int = 0, guard: str | None = None, early: int | None = None) -> dict:
    return {
        "agent": agent,
        "provisional_events": open_events,
        "leakage_guard": guard,
        "rounds_before_cutoff": early,
    }


def test_notes_name_provisional_scores_unguarded_agents_and_early_rounds() -> None:
    rows = [_row("llm-a", 3, "off", 0), _row("llm-b", 0, "on", 2), _row("half", 1)]
    assert stated_notes(rows) == [
        IMPUTED_NOTE,
        "Stated scores are provisional: stated events still unresolved (llm-a 3, half 1).",
        "leakage guard: off for llm-a (replay LLM without knowledge_cutoff)",
        "llm-b: 2 rounds before its knowledge cutoff (flagged)",
    ]


def test_nothing_open_nothing_unguarded_only_the_reading_is_explained() -> None:
    assert stated_notes([_row("market"), _row("llm", 0, "on", 0)]) == [IMPUTED_NOTE]
