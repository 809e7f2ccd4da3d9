"""Stated forecasts are scored on every resolution the data holds, however early the cohort
completed: no agent's stated score depends on which positions other agents kept open."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from arena.scoring import leaderboard, load_frames
from tests.engine.helpers import D0, A, config, replay, script, tiny_dataset

MARKET = {"name": "market", "kind": "market"}


def _market_row(engine: Engine, cohort_id: str) -> dict:
    table = leaderboard(load_frames(engine, [cohort_id]), by="stated_brier", replicates=50)
    return table.filter(agent="market").row(0, named=True)


@pytest.mark.parametrize("with_holder", [False, True])
def test_market_is_scored_on_the_same_events_with_or_without_a_bettor_holding_a(
    engine: Engine, tmp_path: Path, with_holder: bool
) -> None:
    """Rounds on days 0 and 7. ``market`` states A (YES 0.40, then 0.50) and B (0.25, then 0.20);
    C is void. B resolves NO on day 9 and A YES on day 19, both after the last round.

    Alone, the cohort completes on day 8 with no position open; with ``holder`` holding A it stays
    open until day 19. Either way ``market`` is scored on A and B:
    A: 7 days at 0.40 and 12 at 0.50, YES: (7 × 0.36 + 12 × 0.25) / 19 = 5.52 / 19;
    B: 7 days at 0.25 and 2 at 0.20, NO: (7 × 0.0625 + 2 × 0.04) / 9 = 0.5175 / 9.
    """
    agents = [MARKET]
    if with_holder:
        line = {"time": D0.isoformat(), "market_id": A, "outcome": "YES", "amount": 100}
        agents.append(
            {"name": "holder", "kind": "scripted", "path": str(script(tmp_path / "h.jsonl", [line]))}
        )
    result, rt = replay(engine, config(tiny_dataset(tmp_path / "data"), agents))
    assert result.completed
    row = _market_row(engine, rt.cohort_id)
    assert row["stated_events"] == 2
    assert row["stated_brier"] == pytest.approx((5.52 / 19 + 0.5175 / 9) / 2)
    assert row["provisional_events"] == 0
    # Imputed reading: the same statements every round, nothing missing; per round A: .36, .25;
    # B: .0625, .04 → ((.36 + .25) / 2 + (.0625 + .04) / 2) / 2.
    assert row["imputed_share"] == 0.0
    assert row["stated_brier_imputed"] == pytest.approx(((0.36 + 0.25) / 2 + (0.0625 + 0.04) / 2) / 2)


def test_markets_open_at_the_scoring_time_are_scored_apart_as_provisional(
    engine: Engine, tmp_path: Path
) -> None:
    """Scored as of day 8, before B (day 9) and A (day 19) resolve: nothing is final yet.

        ``sayer`` states A at 0.9 on day 0; the latest price of A by day 8 is 0.50 (day 7):
        (0.9 − 0.5)² = 0.16. ``market`` restated every price on day 7: 0 on its 3 open events (C
    voids only on day 17).
    """
    line = {"time": D0.isoformat(), "market_id": A, "outcome": "YES", "probability": 0.9}
    sayer = {"name": "sayer", "kind": "scripted", "path": str(script(tmp_path / "s.jsonl", [line]))}
    _, rt = replay(engine, config(tiny_dataset(tmp_path / "data"), [MARKET, sayer]))
    frames = load_frames(engine, [rt.cohort_id]).as_of(D0 + timedelta(days=8))
    rows = {r["agent"]: r for r in leaderboard(frames, replicates=50).iter_rows(named=True)}
    assert (rows["sayer"]["stated_events"], rows["sayer"]["provisional_events"]) == (0, 1)
    assert rows["sayer"]["stated_brier_provisional"] == pytest.approx(0.16)
    assert (rows["market"]["provisional_events"], rows["market"]["stated_brier_provisional"]) == (3, 0.0)
    assert rows["sayer"]["stated_brier"] is None  # never mixed into the resolved score
