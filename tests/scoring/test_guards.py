"""Per-agent leakage guard state and rounds before the knowledge cutoff, from the frames."""

from __future__ import annotations

from arena.scoring.rules.guards import guard_metrics
from tests.scoring.builders import build, day, decision, seat


def test_guard_state_pools_seats_and_counts_rounds_before_the_cutoff() -> None:
    """``early`` knows up to the end of day 3 (ends at day 4): its rounds on days 0 and 2 are
    before that, day 4 is not → 2. ``blind`` has a guarded seat in c1 but none in c2: off."""
    guards = [
        {"cohort_id": "c1", "agent": "early", "knowledge_ends": day(4), "leakage_guard": "on"},
        {"cohort_id": "c1", "agent": "blind", "knowledge_ends": day(1), "leakage_guard": "on"},
        {"cohort_id": "c2", "agent": "blind", "knowledge_ends": None, "leakage_guard": "off"},
    ]
    frames = build(
        agents=[seat("early"), seat("blind"), seat("blind", cohort="c2"), seat("h", kind="baseline")],
        decisions=[decision("early", day(n)) for n in (0, 2, 4)]
        + [decision("blind", day(n)) for n in (0, 2)],
        guards=guards,
    )
    got = {r["agent"]: r for r in guard_metrics(frames).iter_rows(named=True)}
    assert got["early"] == {"agent": "early", "leakage_guard": "on", "rounds_before_cutoff": 2}
    # blind's c1 round on day 0 is before day 1; its c2 seat has no cutoff and counts none.
    assert got["blind"] == {"agent": "blind", "leakage_guard": "off", "rounds_before_cutoff": 1}
    assert "h" not in got  # baselines are not guarded: null on the leaderboard
