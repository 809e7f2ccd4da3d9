"""The assembled leaderboard: properties that must hold, reproducibility, sorting, aggregation, JSON."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import polars as pl
import pytest

from arena.scoring import COLUMNS, ScoringFrames, Settings, leaderboard, leaderboard_document
from arena.scoring.rules.scores import LOG_CLIP
from tests.scoring.builders import build, buy, day, mark, price, resolution, seat, statement, window
from tests.scoring.synthetic import World, synthetic_frames

N_MARKETS = 12


def _arena():
    """12 binary markets; prices move once mid-life; half resolve YES.

    oracle: bets its max on the side that wins and states 1 for it.
    echo: bets YES with confidence equal to the YES price and restates every price it sees.
    idle: never bets, never states.
    """
    agents = [seat("oracle"), seat("echo", kind="baseline"), seat("idle")]
    fills, forecasts, prices, resolutions, windows = [], [], [], [], []
    for k in range(N_MARKETS):
        market, winner = f"polymarket:{k}", ("YES" if k % 2 else "NO")
        first, later = 0.3 + 0.04 * k, 0.2 + 0.05 * k
        prices += [price(market, day(0), first), price(market, day(2), later)]
        resolutions.append(resolution(market, winner, at=day(5)))
        windows.append(window(market, 0, 5))
        win_price = first if winner == "YES" else 1 - first
        fills.append(buy("oracle", market, winner, "2500", round(win_price, 4), at=day(0)))
        forecasts.append(statement("oracle", market, 1.0 if winner == "YES" else 0.0, day(0)))
        fills.append(buy("echo", market, "YES", str(Decimal(2500) * Decimal(str(first))), first, at=day(0)))
        forecasts += [statement("echo", market, first, day(0)), statement("echo", market, later, day(2))]
    snapshots = [mark("oracle", day(5), "13000"), mark("echo", day(5), "9900")]
    return build(
        agents=agents,
        fills=fills,
        forecasts=forecasts,
        prices=prices,
        resolutions=resolutions,
        snapshots=snapshots,
        windows=windows,
    )


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    return leaderboard(_arena(), replicates=300, seed=1)


def _row(table: pl.DataFrame, agent: str) -> dict:
    return table.filter(pl.col("agent") == agent).row(0, named=True)


def test_columns_are_the_documented_ones(table: pl.DataFrame) -> None:
    assert tuple(table.columns) == COLUMNS
    assert len(set(COLUMNS)) == len(COLUMNS)


def test_perfect_forecaster(table: pl.DataFrame) -> None:
    oracle = _row(table, "oracle")
    assert (oracle["brier"], oracle["brier_lo"], oracle["brier_hi"]) == (0.0, 0.0, 0.0)
    assert (oracle["win_rate"], oracle["brier_label"], oracle["bss_random"]) == (1.0, "Perfect", 1.0)
    assert oracle["stated_brier"] == 0.0
    assert oracle["log_score"] == pytest.approx(math.log(1 - LOG_CLIP))  # 1 is clipped to 0.999 for the log


def test_market_baseline_has_no_skill_against_the_market(table: pl.DataFrame) -> None:
    echo = _row(table, "echo")
    assert echo["bss_market"] == pytest.approx(0.0, abs=1e-12)
    assert echo["brier"] == pytest.approx(echo["brier_market"])
    assert echo["rel_log_score"] == pytest.approx(0.0, abs=1e-12)
    assert (echo["tournament_score"], echo["coverage"]) == (pytest.approx(0.0, abs=1e-12), 1.0)
    assert echo["baseline"] is True


def test_tournament_split(table: pl.DataFrame) -> None:
    """oracle states 0.999 (clipped) for the winner over each 5-day window: 2 days against the first
    price, 3 against the later one; s sums ln(0.999 / m) over the 12 questions. echo (s = 0, c = 1)
    takes 1 / (1 + e^s) and idle (c = 0) nothing; the pool is the default $1,000."""
    s = 0.0
    for k in range(N_MARKETS):
        first, later = 0.3 + 0.04 * k, 0.2 + 0.05 * k
        won_first, won_later = (first, later) if k % 2 else (1 - first, 1 - later)
        s += 0.4 * math.log((1 - LOG_CLIP) / won_first) + 0.6 * math.log((1 - LOG_CLIP) / won_later)
    oracle, echo, idle = (_row(table, a) for a in ("oracle", "echo", "idle"))
    assert (oracle["tournament_score"], oracle["coverage"]) == (pytest.approx(s), 1.0)
    assert echo["tournament_take"] == pytest.approx(1 / (1 + math.exp(s)))
    assert oracle["tournament_prize"] == pytest.approx(1000 * math.exp(s) / (1 + math.exp(s)))
    assert (idle["tournament_score"], idle["coverage"], idle["tournament_prize"]) == (0.0, 0.0, 0.0)


def test_agent_that_never_bets(table: pl.DataFrame) -> None:
    idle = _row(table, "idle")
    assert (idle["value"], idle["pnl"], idle["return_pct"], idle["return_label"]) == (
        Decimal(10000),
        Decimal(0),
        0.0,
        "Neutral",
    )
    assert (idle["bets"], idle["resolved_bets"], idle["brier"], idle["win_rate"]) == (0, 0, None, None)
    assert (idle["coverage"], idle["tournament_take"], idle["turnover"]) == (0.0, 0.0, 0.0)


def test_sorted_by_return_with_the_leader_compared(table: pl.DataFrame) -> None:
    assert table["agent"].to_list() == ["oracle", "idle", "echo"]  # +30%, 0%, −1%
    assert table["rank"].to_list() == [1, 2, 3]
    leader = table.row(0, named=True)
    for m in ("brier", "log_score", "return_pct"):  # the leader is not compared with itself
        assert leader[f"vs_leader_{m}_diff"] is None and leader[f"vs_leader_{m}_few_markets"] is None
    echo = _row(table, "echo")
    assert echo["vs_leader_brier_common_markets"] == N_MARKETS
    assert echo["vs_leader_brier_share_better"] == 0.0  # the oracle is perfect on every market
    assert echo["vs_leader_brier_few_markets"] is True  # 12 < 30 common markets
    assert echo["few_markets"] is True


def test_sort_by_brier_ascending_with_unscored_last() -> None:
    table = leaderboard(_arena(), by="brier", replicates=50)
    assert table["agent"].to_list() == ["oracle", "echo", "idle"]
    assert table["rank"].to_list() == [1, 2, None]
    with pytest.raises(ValueError, match="cannot sort by 'luck'"):
        leaderboard(_arena(), by="luck")


def test_seeded_bootstrap_is_reproducible() -> None:
    frames = synthetic_frames(World(agents=4, markets=60, bets=600))
    first = leaderboard(frames, seed=5, replicates=400)
    assert first.equals(leaderboard(frames, seed=5, replicates=400))
    other = leaderboard(frames, seed=6, replicates=400)
    assert first.select("agent", "brier", "return_pct").equals(other.select("agent", "brier", "return_pct"))
    assert not first["brier_lo"].equals(other["brier_lo"])


def test_intervals_bracket_the_estimates() -> None:
    table = leaderboard(synthetic_frames(World(agents=5, markets=120, bets=2_000)), replicates=500)
    for metric in ("brier", "stated_brier", "log_score", "rel_log_score", "return_pct", "bss_market"):
        lo, value, hi = (table[c] for c in (f"{metric}_lo", metric, f"{metric}_hi"))
        assert ((lo <= value) & (value <= hi)).all(), metric


def test_point_in_time_scoring() -> None:
    before = leaderboard(_arena().as_of(day(4)), replicates=50)
    assert before["resolved_bets"].sum() == 0
    assert before["stated_events"].sum() == 0


def test_cross_cohort_table_pools_cohorts() -> None:
    frames = build(
        agents=[seat("a"), seat("a", cohort="c2", bankroll="5000"), seat("b")],
        snapshots=[mark("a", day(1), "11000"), mark("a", day(1), "4750", cohort="c2")],
    )
    pooled = leaderboard(frames, replicates=20)
    assert _row(pooled, "a")["cohorts"] == 2
    assert _row(pooled, "a")["return_pct"] == pytest.approx(5.0)
    alone = leaderboard(frames.cohorts(["c2"]), replicates=20)
    assert alone["agent"].to_list() == ["a"]
    assert alone.row(0, named=True)["return_pct"] == pytest.approx(-5.0)


def test_json_document_is_plain_json_with_stable_keys() -> None:
    frames = _arena()
    document = leaderboard_document(frames, Settings(replicates=50), cohorts=["c1"], as_of=day(9))
    text = json.dumps(document)  # nothing but JSON types
    again = json.loads(text)
    assert list(again) == [
        "schema_version",
        "cohorts",
        "cohort_selection",
        "cohorts_left_out",
        "cohorts_not_scored",
        "as_of",
        "sort_by",
        "bootstrap",
        "min_markets",
        "prize_pool",
        "implied",
        "pool_by",
        "agents",
        "footnotes",
        "breakdowns",
        "calibration",
        "replicate_rows",
    ]
    assert again["replicate_rows"] == []  # no agent is replicated
    assert again["bootstrap"] == {"replicates": 50, "seed": 0, "confidence": 0.95, "unit": "market"}
    assert again["as_of"] == "2025-01-10T00:00:00+00:00"
    assert (again["cohort_selection"], again["cohorts_left_out"], again["cohorts_not_scored"]) == (
        "named",
        [],
        [],
    )  # the caller named c1
    assert (again["schema_version"], again["prize_pool"]) == (3, 1000.0)  # the one cohort's default pool
    oracle = again["agents"][0]
    assert list(oracle) == list(COLUMNS)
    assert (oracle["value"], oracle["pnl"], oracle["bankroll"]) == (13000.0, 3000.0, 10000.0)
    assert {row["dimension"] for row in again["breakdowns"]} == {"venue", "category", "horizon"}
    assert {row["agent"] for row in again["calibration"]["stated"]} == {"oracle", "echo"}


def test_empty_arena_gives_an_empty_table_with_every_column() -> None:
    empty = leaderboard(build(), replicates=10)
    assert (empty.height, tuple(empty.columns)) == (0, COLUMNS)
    idle = leaderboard(build(agents=[seat("a")]), replicates=10)
    assert idle.select("agent", "value", "bets", "brier", "return_pct_lo", "return_pct_hi").row(0) == (
        "a",
        Decimal(10000),
        0,
        None,
        0.0,
        0.0,
    )


@pytest.mark.parametrize(("resolved", "few"), [(10, True), (35, False)])
def test_return_comparison_is_flagged_by_the_resolved_markets_both_bet_on(resolved: int, few: bool) -> None:
    # Both agents bet the same 40 markets; the leader's side wins. P/L counts all 40 (open ones at
    # their last price), but only the resolved ones say anything settled about skill.
    fills, prices, resolutions = [], [], []
    for k in range(40):
        market = f"polymarket:{k}"
        fills += [buy("lead", market, "YES", "500", 0.5), buy("other", market, "NO", "500", 0.5)]
        prices.append(price(market, day(1), 0.6))
        if k < resolved:
            resolutions.append(resolution(market, "YES", at=day(2)))
    frames = build(
        agents=[seat("lead"), seat("other")],
        fills=fills,
        prices=prices,
        resolutions=resolutions,
        snapshots=[mark("lead", day(2), "11000"), mark("other", day(2), "9000")],
    )
    other = _row(leaderboard(frames, replicates=50), "other")
    assert other["vs_leader_return_pct_common_markets"] == 40
    assert other["vs_leader_brier_common_markets"] == resolved
    assert other["vs_leader_return_pct_few_markets"] is few


def _same_bets(resolved: int, *, twin_wins: int) -> ScoringFrames:
    """lead and twin each bet $500 YES at 0.10 on ``resolved`` markets, all resolving YES (fa: P =
    0.2, Brier 0.64 each); on the first ``twin_wins`` of them twin bets $1,000 instead (P = 0.4,
    Brier 0.36): better there, the same everywhere else."""
    fills, resolutions = [], []
    for k in range(resolved):
        market = f"polymarket:{k}"
        fills += [
            buy("lead", market, "YES", "500", 0.10),
            buy("twin", market, "YES", "1000" if k < twin_wins else "500", 0.10),
        ]
        resolutions.append(resolution(market, "YES", at=day(2)))
    return build(agents=[seat("lead"), seat("twin")], fills=fills, resolutions=resolutions)


def test_identical_forecasters_tie_everywhere_and_get_no_p_value() -> None:
    """35 markets, the same bets: 0% better (ties are not wins), 35 ties, and no p-value: the
    difference is 0 in every replicate (ties counted half would have shown 50%)."""
    twin = _row(leaderboard(_same_bets(35, twin_wins=0), by="brier", replicates=200), "twin")
    fields = ("diff", "share_better", "wins", "ties", "losses", "common_markets", "few_markets")
    assert [twin[f"vs_leader_brier_{f}"] for f in fields] == [0.0, 0.0, 0, 35, 0, 35, False]
    assert twin["vs_leader_brier_p_value"] is None
    assert twin["vs_leader_brier_p_value_reason"].startswith("no bootstrap variance")


@pytest.mark.parametrize(("resolved", "p_given"), [(29, False), (30, True)])
def test_a_p_value_needs_min_markets_in_common(resolved: int, p_given: bool) -> None:
    """twin is better on 10 markets and the same on the rest (sorted by Brier, it leads): lead
    trails by 10 · 0.28 / n. Below 30 common markets no p-value; from 30, a bootstrap one."""
    lead = _row(leaderboard(_same_bets(resolved, twin_wins=10), by="brier", replicates=200), "lead")
    assert lead["vs_leader_brier_diff"] == pytest.approx(10 * 0.28 / resolved)
    assert (lead["vs_leader_brier_wins"], lead["vs_leader_brier_ties"], lead["vs_leader_brier_losses"]) == (
        0,
        resolved - 10,
        10,
    )
    assert lead["vs_leader_brier_share_better"] == 0.0
    if p_given:
        assert 0 < lead["vs_leader_brier_p_value"] <= 1 and lead["vs_leader_brier_p_value_reason"] is None
    else:
        assert lead["vs_leader_brier_p_value"] is None
        assert lead["vs_leader_brier_p_value_reason"] == "fewer than 30 common resolved markets"
