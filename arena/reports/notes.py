"""Footnotes every leaderboard view prints (CLI table, report, dashboard), from leaderboard rows."""

from __future__ import annotations

from typing import Any

from arena.scoring.rules.difficulty import PANELS, why_key

SHOWN_NAMES = 5  # agents named in a note before "and N more"

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


def adjusted_notes(agents: list[dict[str, Any]]) -> list[str]:
    """Why difficulty-adjusted Briers are missing: one note per reason, naming its agents."""
    reasons: dict[str, list[str]] = {}
    for agent in agents:
        for panel in PANELS:
            why = agent.get(why_key(panel))
            if why and agent["agent"] not in reasons.setdefault(why, []):
                reasons[why].append(agent["agent"])
    return [f"Adjusted Brier not given ({_names(names)}): {why}." for why, names in reasons.items()]


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    return shown + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else "")
