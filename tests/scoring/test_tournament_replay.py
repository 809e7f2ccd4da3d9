"""The tournament through a real replay: the hidden period hides the market, and the market copier
wins exactly $0 with ``c_weight = 1`` (the Metaculus tournament rules, "Battling the Bot"). SQLite
and PostgreSQL.

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


def _alice_and_bob(tmp_path: Path) -> list[dict[str, object]]:
    """alice: 0.70 on Q's YES from day 0, and a $100 YES bet so that the cohort runs until Q
    resolves. bob: 0.20 from day 2. (Both scripted, stated once, standing until the resolution.)"""
    lines = {"alice": (0, 0.70, {"amount": 100}), "bob": (2, 0.20, {})}
    return [
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


def _cohort(engine: Engine, tmp_path: Path) -> str:
    """market: the baseline stating the market price it sees; alice and bob (``_alice_and_bob``)."""
    dataset = write_market_dataset(
        tmp_path / "data", {Q: {0: "0.40", 4: "0.50"}}, {Q: (10, ResolutionKind.YES)}, close_days={Q: 10}
    )
    data = config(dataset, [{"name": "market", "kind": "market"}, *_alice_and_bob(tmp_path)])
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


def test_defaults_leave_the_copier_nothing_and_the_reference_follows_the_daily_path(
    engine: Engine, tmp_path: Path
) -> None:
    """The shipped tournament defaults (hidden_fraction 0.3, s_weight 0.3, c_weight 1, $1,000) on
    Q: YES 0.40 from day 0, 0.60 from day 1, 0.50 from day 4, 0.70 from day 5; closes and resolves
    YES on day 10. Rounds on days 0, 2, 4, 6, 8: Q's window is [0, 10], hidden until day 3.

    The replay stores the daily path, so m(t) is 0.40, 0.60, 0.50, 0.70 from days 0, 1, 4, 5, not
    only the prices at round times. market restates what it sees: nothing on days 0 and 2 (hidden),
    0.50 on day 4, 0.70 on days 6 and 8. It trails the path on [5, 6): s = 0.7 · ln(0.5/0.7) / 7
    (0 with round prices only), and it covers nothing of the hidden period: c = 0, take 0.
    alice 0.70 from day 0: hidden mean (ln(.7/.4) + 2·ln(.7/.6)) / 3, visible mean
    (ln(.7/.6) + ln(.7/.5) + 0) / 7: s = 0.1·(ln 1.75 + 3·ln(7/6) + ln 1.4), c = 1.
    bob 0.20 from day 2: hidden ln(.2/.6) / 3; visible (ln(.2/.6) + ln(.2/.5) + 5·ln(.2/.7)) / 7:
    s = 0.1·(2·ln(1/3) + ln 0.4 + 5·ln(2/7)), c = 1/3.
    """
    dataset = write_market_dataset(
        tmp_path / "data",
        {Q: {0: "0.40", 1: "0.60", 4: "0.50", 5: "0.70"}},
        {Q: (10, ResolutionKind.YES)},
        close_days={Q: 10},
    )
    agents = [
        {"name": "market", "kind": "market"},
        {"name": "hold", "kind": "hold"},
        *_alice_and_bob(tmp_path),
    ]
    data = config(dataset, agents)
    data["schedule"] = {"every": "2d", "rounds": 5}
    del data["tournament"]  # the shipped defaults
    result, rt = replay(engine, data)
    assert result.completed
    frames = load_frames(engine, [rt.cohort_id])
    path = frames.prices.filter(pl.col("market_id") == Q).sort("observed_at")
    assert path.select("observed_at", "price").rows() == [
        (day(0), 0.40),
        (day(1), 0.60),
        (day(4), 0.50),
        (day(5), 0.70),
    ]
    window = frames.windows.row(0, named=True)
    assert (window["opens_at"], window["hidden_until"], window["closes_at"]) == (day(0), day(3), day(10))

    got = {
        r["agent"]: r for r in leaderboard(frames, by="tournament_take", replicates=20).iter_rows(named=True)
    }
    s_market = 0.1 * math.log(0.5 / 0.7)
    s_alice = 0.1 * (math.log(1.75) + 3 * math.log(7 / 6) + math.log(1.4))
    s_bob = 0.1 * (2 * math.log(1 / 3) + math.log(0.4) + 5 * math.log(2 / 7))
    assert got["market"]["tournament_score"] == pytest.approx(s_market)
    assert (got["market"]["coverage"], got["market"]["tournament_take"]) == (0.0, 0.0)
    assert (got["alice"]["tournament_score"], got["alice"]["coverage"]) == (pytest.approx(s_alice), 1.0)
    assert (got["bob"]["tournament_score"], got["bob"]["coverage"]) == (
        pytest.approx(s_bob),
        pytest.approx(1 / 3),
    )
    big_s = {"alice": math.exp(s_alice), "bob": math.exp(s_bob) / 3}
    assert got["alice"]["tournament_prize"] == pytest.approx(1000 * big_s["alice"] / sum(big_s.values()))

    # Stated, imputed: market was silent in the hidden rounds, where it could see no price. Those
    # take 0.5 (not the hidden 0.40 and 0.60): days 0, 2 (0.5−1)² = .25; day 4 .25; days 6, 8 .09.
    assert got["market"]["stated_brier_imputed"] == pytest.approx((0.25 * 3 + 0.09 * 2) / 5)
    assert got["market"]["imputed_share"] == pytest.approx(2 / 5)
    # hold never stated: no stated score, and no imputed one.
    assert (got["hold"]["stated_brier_imputed"], got["hold"]["imputed_share"]) == (None, None)
