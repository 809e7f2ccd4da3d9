"""Footnotes every leaderboard view prints (CLI table, report, dashboard), from leaderboard rows."""

from __future__ import annotations

from typing import Any

IMPUTED_NOTE = (
    "Stated imputed: stated Brier over every offered round and market, a missing forecast at that "
    "round's market price (ForecastBench), or 0.5 where the round hid it; none (—) for an agent "
    "that never stated a probability."
)


def stated_notes(agents: list[dict[str, Any]]) -> list[str]:
    """Footnotes every leaderboard view prints: the stated reading used, provisional stated scores
    (markets still open) and agents that ran with the leakage guard off."""
    notes = [IMPUTED_NOTE]
    open_events = {a["agent"]: a["provisional_events"] for a in agents if a["provisional_events"]}
    if open_events:
        listed = ", ".join(f"{name} {count}" for name, count in open_events.items())
        notes.append(f"Stated scores are provisional: stated events still unresolved ({listed}).")
    notes += [
        f"leakage guard: off for {a['agent']} (replay LLM without knowledge_cutoff)"
        for a in agents
        if a["leakage_guard"] == "off"
    ]
    notes += [
        f"{a['agent']}: {a['rounds_before_cutoff']} rounds before its knowledge cutoff (flagged)"
        for a in agents
        if a["rounds_before_cutoff"]
    ]
    return notes
