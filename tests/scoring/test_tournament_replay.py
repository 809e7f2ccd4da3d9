"""The tournament through a real replay: the hidden period hides the market, and the market copier
wins exactly $0 with ``c_weight = 1`` (seed 000, "Battling the Bot"). SQLite and PostgreSQL.

One binary market Q: YES at 0.40 from day 0, 0.50 from day 4; closes and resolves YES on day 10.
Rounds every 2 days on days 0, 2, 4, 6, 8 (5 rounds): the cohort ends on day 10, so Q's window
is [day 0, day 10] and, with hidden_fraction 0.3, its price is hidden until day 3 (rounds 0 and 1).
"""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from sqlalchemy import Engine

from arena.scoring import leaderboard, load_frames
from markets.types import ResolutionKind
from tests.engine.helpers import config, day, replay, script, write_market_dataset

Q = "polymarket:q"


def _cohort(engine: Engine, tmp_path: Path) -> str:
    """market: the baseline stating the market price it sees. alice: 0.70 from day 0, and a $100
    YES bet so that the cohort runs until Q resolves. bob: 0.20 from day 2. (Both scripted, stated
    once, standing until the resolution.)"""
    dataset = write_market_dataset(
        tmp_path / "data", {Q: {0: "0.40", 4: "0.50"}}, {Q: (10, ResolutionKind.YES)}, close_days={Q: 10}
    )
    lines = {"alice": (0, 0.70, {"amount": 100}), "bob": (2, 0.20, {})}
    scripted = [
        {
            "name": name,
            "kind": "scripted",
            "path": str(
                script(
                    tmp_path / f"{name}.jsonl",
                    [{"time": day(d).isoformat(), "market_id": Q, "outcome": "YES", "probability": p, **bet}],
                )
            ),
        }
        for name, (d, p, bet) in lines.items()
    ]
    data = config(dataset, [{"name": "market", "kind": "market"}, *scripted])
    data["schedule"] = {"every": "2d", "rounds": 5}
    data["tournament"] = {"hidden_fraction": 0.3, "c_weight": 1, "prize_pool": 500}
    result, rt = replay(engine, data)
    assert result.completed
    return rt.cohort_id


def test_market_copier_wins_nothing(engine: Engine, tmp_path: Path) -> None:
    """s_weight defaults to 0.3 (every moment weighs the same); c_weight = 1.

    market: its price was hidden on days 0 and 2, so it stated only on days 4, 6, 8, each time
    exactly the reference price (0.50): s = 0 and hidden coverage c = 0, so S = 0 and $0.
    alice (0.70 over the whole window): hidden [0, 3) against 0.40; visible [3, 4) against 0.40,
    [4, 10) against 0.50: s = 0.3·ln(0.7/0.4) + 0.7·(1·ln(0.7/0.4) + 6·ln(0.7/0.5)) / 7
    = 0.4·ln 1.75 + 0.6·ln 1.4; c = 1.
    bob (0.20 from day 2): hidden: 1 day of 3 at ln(0.2/0.4); visible as alice's with 0.2:
    s = 0.3·ln(0.5)/3 + 0.7·(ln 0.5 + 6·ln 0.4) / 7 = 0.2·ln 0.5 + 0.6·ln 0.4; c = 1/3.
    Take = S / ΣS of the $500 pool.
    """
    cohort_id = _cohort(engine, tmp_path)
    frames = load_frames(engine, [cohort_id])
    market_statements = frames.forecasts.filter(pl.col("agent") == "market")
    assert market_statements["stated_at"].to_list() == [day(4), day(6), day(8)]  # nothing while hidden
    window = frames.windows.row(0, named=True)
    assert (window["opens_at"], window["hidden_until"], window["closes_at"]) == (day(0), day(3), day(10))

    table = leaderboard(frames, by="tournament_take", replicates=20)
    got = {r["agent"]: r for r in table.iter_rows(named=True)}
    s_alice = 0.4 * math.log(1.75) + 0.6 * math.log(1.4)
    s_bob = 0.2 * math.log(0.5) + 0.6 * math.log(0.4)
    big_s = {"alice": math.exp(s_alice), "bob": math.exp(s_bob) / 3}
    assert got["market"]["tournament_score"] == pytest.approx(0.0, abs=1e-12)
    assert (got["market"]["coverage"], got["market"]["tournament_prize"]) == (0.0, 0.0)
    assert (got["alice"]["tournament_score"], got["alice"]["coverage"]) == (pytest.approx(s_alice), 1.0)
    assert (got["bob"]["tournament_score"], got["bob"]["coverage"]) == (
        pytest.approx(s_bob),
        pytest.approx(1 / 3),
    )
    for name, value in big_s.items():
        assert got[name]["tournament_take"] == pytest.approx(value / sum(big_s.values()))
        assert got[name]["tournament_prize"] == pytest.approx(500 * value / sum(big_s.values()))
    assert table["agent"].to_list() == ["alice", "bob", "market"]
