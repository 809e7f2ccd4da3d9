"""Breakdowns by venue, category and horizon, by hand."""

from __future__ import annotations

import pytest

from arena.scoring.rules.breakdowns import breakdowns
from tests.scoring.builders import build, buy, day, resolution, seat


def test_breakdowns_by_hand() -> None:
    # p1: $500 YES at 0.40 (c 0.2), YES after 5 days: Brier 0.64, market 0.36, won, held +$750.
    # m1: $1,000 NO at 0.50 (c 0.4), YES after 20 days: Brier 0.16, market 0.25, lost, −$1,000.
    # p2: $250 YES at 0.50, unresolved: counted as a bet, not scored, no horizon.
    frames = build(
        agents=[seat("a")],
        fills=[
            buy("a", "polymarket:p1", "YES", "500", 0.4, category="politics"),
            buy("a", "manifold:m1", "NO", "1000", 0.5),
            buy("a", "polymarket:p2", "YES", "250", 0.5, category="politics"),
        ],
        resolutions=[
            resolution("polymarket:p1", "YES", at=day(5)),
            resolution("manifold:m1", "YES", at=day(20)),
        ],
    )
    rows = {(r["dimension"], r["bucket"]): r for r in breakdowns(frames).iter_rows(named=True)}
    assert set(rows) == {
        ("venue", "polymarket"),
        ("venue", "manifold"),
        ("category", "politics"),
        ("category", "unknown"),
        ("horizon", "<=7d"),
        ("horizon", "<=30d"),
    }
    polymarket = rows["venue", "polymarket"]
    assert (polymarket["bets"], polymarket["staked"], polymarket["scored_bets"]) == (2, 750.0, 1)
    assert (polymarket["brier"], polymarket["brier_market"]) == (pytest.approx(0.64), pytest.approx(0.36))
    assert (polymarket["win_rate"], polymarket["hold_pnl"], polymarket["hold_roi"]) == (1.0, 750.0, 1.5)
    assert rows["category", "politics"] == {**polymarket, "dimension": "category", "bucket": "politics"}
    manifold = rows["venue", "manifold"]
    assert (manifold["brier"], manifold["win_rate"], manifold["hold_pnl"], manifold["hold_roi"]) == (
        pytest.approx(0.16),
        0.0,
        -1000.0,
        -1.0,
    )
    assert rows["category", "unknown"]["bets"] == 1
    week, month = rows["horizon", "<=7d"], rows["horizon", "<=30d"]
    assert (week["bets"], week["brier"], month["bets"], month["brier"]) == (
        1,
        pytest.approx(0.64),
        1,
        pytest.approx(0.16),
    )
