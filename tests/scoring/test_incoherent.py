"""A bet reading that contradicts the bets it reads, by hand: the tiny-loser trick (tiny bets on
longshots score a near-perfect bet-size Brier while losing money) is measured, flagged in every
view, ranked below coherent readings and credited with no skill."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest
from rich.console import Console

from arena.commands.leaderboard_table import render
from arena.figures import leaderboard_intervals
from arena.scoring import ScoringFrames, Settings, leaderboard, leaderboard_document
from arena.scoring.board.notes import chart_flags
from arena.scoring.metrics.value_for_money import cost_per_point
from tests.scoring.builders import build, buy, day, decision, mark, resolution, seat

LONG = [f"polymarket:long{i}" for i in range(3)]
FAV = [f"polymarket:fav{i}" for i in range(2)]


def _frames() -> ScoringFrames:
    """tiny: $50 on YES at 0.05 in three longshots, all resolving NO (max bet $2,500, cash $10,000).
    fa: P(YES) = 50 / 2500 = 0.02 < 0.05 paid: incoherent, every bet. Brier 0.02² = 0.0004
    ("Excellent"); the market's 0.05² = 0.0025, so skill vs market 1 − 0.0004/0.0025 = 0.84. It
    loses $150: −1.5%. kelly: φ = 50/10,000, P = 0.05 + 0.005 · 0.95 = 0.05475, never below 0.05.
    sharp: $2,000 on YES at 0.60 in two favourites, both resolving YES. fa: P = 0.8 ≥ 0.6, coherent;
    Brier 0.2² = 0.04. It wins 2 × (2000 / 0.6 − 2000) = $2,666.67: +26.7%. idle never bets.
    """
    fills = [buy("tiny", m, "YES", "50", 0.05, cash="10000") for m in LONG]
    fills += [buy("sharp", m, "YES", "2000", 0.60, cash="10000") for m in FAV]
    return build(
        agents=[seat("tiny"), seat("sharp"), seat("idle")],
        fills=fills,
        resolutions=[resolution(m, "NO", at=day(2)) for m in LONG]
        + [resolution(m, "YES", at=day(2)) for m in FAV],
        snapshots=[mark("tiny", day(3), "9850"), mark("sharp", day(3), "12666.67")],
        decisions=[decision("tiny", day(0), tokens=100, cost="0.5"), decision("sharp", day(0), tokens=100)],
    )


def _by_agent(table: pl.DataFrame) -> dict[str, dict]:
    return {r["agent"]: r for r in table.iter_rows(named=True)}


def test_the_share_of_incoherent_bets_and_the_flag_by_hand() -> None:
    got = _by_agent(leaderboard(_frames(), replicates=50))
    tiny, sharp = got["tiny"], got["sharp"]
    assert tiny["brier"] == pytest.approx(0.0004) and tiny["brier_label"] == "Excellent"
    assert tiny["bss_market"] == pytest.approx(0.84)
    assert (tiny["incoherent_share"], tiny["brier_incoherent"]) == (1.0, True)
    assert (tiny["incoherent_share_lo"], tiny["incoherent_share_hi"]) == (1.0, 1.0)
    assert (sharp["incoherent_share"], sharp["brier_incoherent"]) == (0.0, False)
    # The Kelly reading starts from the price paid: never below it.
    assert (tiny["incoherent_share_kelly"], tiny["brier_incoherent_kelly"]) == (0.0, False)
    assert tiny["brier_kelly"] == pytest.approx(0.05475**2)


def test_the_tiny_loser_never_ranks_first_by_default_nor_by_its_brier() -> None:
    by_default = leaderboard(_frames(), replicates=50)
    assert by_default["agent"].to_list() == ["sharp", "idle", "tiny"]  # +26.7%, 0, −1.5%
    by_brier = leaderboard(_frames(), by="brier", replicates=50)
    # 0.0004 < 0.04, but tiny's reading contradicts its bets: it ranks after every coherent one;
    # idle has no Brier at all and comes last, unranked.
    assert by_brier.select("agent", "rank").rows() == [("sharp", 1), ("tiny", 2), ("idle", None)]
    by_skill = leaderboard(_frames(), by="bss_market", replicates=50)
    assert by_skill["agent"].to_list() == ["sharp", "tiny", "idle"]


def test_every_view_carries_the_flag_and_its_reason() -> None:
    document = leaderboard_document(_frames(), Settings(replicates=50), cohorts=["c1"], as_of=None)
    (note,) = [n for n in document["footnotes"] if "as less likely than the price paid" in n]
    assert "(Brier, share of bets): tiny (0.000, 100%). Nobody buys" in note  # tiny alone is flagged
    console = Console(width=200, record=True)
    for wide in (False, True):
        console.print(render(document, wide=wide))
    text = console.export_text()
    assert (
        "tiny ‡¶" in text
        and "Excellent ¶" in text
        and "¶ Brier (bets) in the fa reading reads at least 50%" in text
    )
    assert "sharp ‡ " in text and "sharp ‡¶" not in text  # few markets, coherent
    # Charts of a Brier (bets) metric name the flag beside the agent (dashboard and report alike).
    table = leaderboard(_frames(), replicates=50)
    assert chart_flags(table, "bss_market") == {"tiny": "¶ bets read incoherently (fa)"}
    assert chart_flags(table, "return_pct") == {}
    figure = leaderboard_intervals(table, "brier", {}, axis="Brier (bets)", flags=chart_flags(table, "brier"))
    assert {trace.name for trace in figure.data} == {"tiny ¶ bets read incoherently (fa)", "sharp"}


def test_cost_vs_score_credits_an_incoherent_reading_with_no_skill() -> None:
    """tiny cost $0.50: a Brier of 0.0004 would be 24.96 points over 50% ($0.02 a point); it is
    credited with none, and the reason is given."""
    table = leaderboard(_frames(), replicates=50)
    rows = {r["agent"]: r for r in cost_per_point(table, "fa").iter_rows(named=True)}
    tiny, sharp = rows["tiny"], rows["sharp"]
    assert sharp["points"] == pytest.approx((0.25 - 0.04) * 100)  # coherent: credited
    assert tiny["agent"] == "tiny" and tiny["cost"] == Decimal("0.5")
    assert (tiny["points"], tiny["market_points"], tiny["per_point"], tiny["per_market_point"]) == (None,) * 4
    assert tiny["per_point_why"] == "no credit: 100% of its bets read below the price paid"
    assert tiny["return_pct"] == pytest.approx(-1.5)
