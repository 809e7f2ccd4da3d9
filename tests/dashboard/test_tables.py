"""The leaderboard's tables, on frames: each note under the table that shows its columns."""

from __future__ import annotations

from dashboard import tables


def test_notes_go_with_the_table_showing_their_columns_but_a_flags_reason_stays_in_view() -> None:
    compact = ["#", "Agent", "Role", "Brier (stated)"]
    every = ["Agent", "Brier (stated)", "Log score (stated)", "Imputed share"]
    plain = "Brier (stated) is provisional."
    folded = "Imputed share: how much of the score the price stood in for."
    flag = "bot: stated 10% of what it was shown: Brier (stated), Log score (stated) average that."
    here, there = tables.place_notes([plain, folded, flag], compact, every, pinned={flag})
    assert here == [plain, flag] and there == [folded]
    assert tables.place_notes([flag], compact, every) == ([], [flag])  # unpinned: it names a folded column
