"""Leaderboard footnotes: one note per flag, naming every agent it concerns with its own figures,
and the lone tournament entrant named as an agent."""

from __future__ import annotations

from arena.scoring.board.notes import marked_notes


def _row(agent: str, **flags: object) -> dict[str, object]:
    """A leaderboard row with no label conflict and no tournament coverage, plus ``flags``."""
    return {"agent": agent, "label_conflict": None, "coverage": 0.0, **flags}


def test_agents_under_one_flag_share_one_note_each_with_its_figures() -> None:
    rows = [
        _row("a", brier=0.589, incoherent_share=1.0, brier_incoherent=True),
        _row("b", brier=0.166, incoherent_share=0.82, brier_incoherent=True),
        _row("c", unstated_share=0.25, stated_selective=True, hidden_price_share=0.6, hidden_price_seen=True),
        _row("d", unstated_share=0.4, stated_selective=True),
        _row("e", brier=0.1, incoherent_share=0.1, brier_incoherent=False),
    ]
    notes = marked_notes(rows, "fa")
    assert [mark for mark, _ in notes] == ["¶", "¤", "!"]
    incoherent, selective, hidden = (note for _, note in notes)
    assert "(Brier, share of bets): a (0.589, 100%); b (0.166, 82%). Nobody" in incoherent
    assert " e " not in incoherent  # not flagged, not named
    assert "showed them a price: c (25%); d (40%). Their" in selective
    assert "(flagged from 50%): c (60%). The price" in hidden


def test_no_flag_no_note() -> None:
    assert marked_notes([_row("a", brier=0.1, incoherent_share=0.0, brier_incoherent=False)], "fa") == []


def test_a_tournament_one_agent_covered_names_it_as_an_agent() -> None:
    rows = [
        _row("half", coverage=0.99, tournament_take=0.0, tournament_score=-122.3),
        _row("hold"),
    ]
    ((mark, note),) = marked_notes(rows, "fa")
    assert mark == "" and note.startswith("Tournament: one agent alone, half, has coverage")
