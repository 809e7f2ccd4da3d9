"""Two agents side by side: the paired comparison (hand-computed), stances per market, who was right."""

from __future__ import annotations

from decimal import Decimal

import pytest

from arena.scoring.board.pairs import head_to_head, market_stances, paired_comparison
from arena.scoring.load.frames import suffixed
from tests.scoring.builders import build, buy, day, price, resolution, seat, statement

M1, M2, M3, M4, M5 = (f"polymarket:m{i}" for i in range(1, 6))


def _duel():
    """Max bet 2500, so P(side) = amount / 2500 (reading fa).

    m1 YES: a YES 2000 (0.8 → Brier 0.04), b NO 1000 (0.4 → 0.16).
    m2 NO:  a NO 2000 (0.04), b NO 1500 (0.6 → 0.16).
    m3 NO:  a YES 500 (0.2 → 0.04); b does not bet. c never bets.
    """
    fills = [
        buy("a", M1, "YES", "2000", 0.5),
        buy("b", M1, "NO", "1000", 0.5),
        buy("a", M2, "NO", "2000", 0.5),
        buy("b", M2, "NO", "1500", 0.5),
        buy("a", M3, "YES", "500", 0.5),
    ]
    resolutions = [resolution(M1, "YES"), resolution(M2, "NO"), resolution(M3, "NO")]
    return build(agents=[seat("a"), seat("b"), seat("c")], fills=fills, resolutions=resolutions)


def test_paired_comparison_is_first_minus_second_on_common_markets() -> None:
    brier = suffixed("brier", "fa")
    ab = paired_comparison(_duel(), "a", "b", seed=3, replicates=200).filter(metric=brier).row(0, named=True)
    # Each agent's own Brier over all its bets; the difference only over m1 and m2 (a: 0.04, b: 0.16).
    assert ab["first"] == pytest.approx(0.04) and ab["second"] == pytest.approx(0.16)
    assert ab["diff"] == pytest.approx(-0.12)
    # Every replicate draws m1 and m2 only, where a is 0.04 and b 0.16 on each: no spread.
    assert ab["diff_lo"] == pytest.approx(-0.12) and ab["diff_hi"] == pytest.approx(-0.12)
    assert ab["share_better"] == 1.0 and ab["common_markets"] == 2 and ab["few_markets"] is True
    ba = paired_comparison(_duel(), "b", "a", seed=3, replicates=200).filter(metric=brier).row(0, named=True)
    assert ba["diff"] == pytest.approx(0.12) and ba["share_better"] == 0.0
    assert (ba["diff_lo"], ba["diff_hi"]) == pytest.approx((-ab["diff_hi"], -ab["diff_lo"]))
    assert ba["p_value"] == ab["p_value"]


def test_paired_comparison_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="'zed' is not in these cohorts"):
        paired_comparison(_duel(), "a", "zed", seed=0)
    with pytest.raises(ValueError, match="two different agents"):
        paired_comparison(_duel(), "a", "a", seed=0)


def _stances():
    fills = [
        buy("a", M1, "YES", "100", 0.5),
        buy("a", M1, "NO", "50", 0.5),
        buy("b", M1, "YES", "10", 0.5),
        *(buy(agent, M2, side, "100", 0.5) for agent, side in (("a", "YES"), ("b", "NO"))),
        *(buy(agent, market, "YES", "100", 0.5) for agent in "ab" for market in (M3, M4, M5)),
    ]
    return build(
        agents=[seat("a"), seat("b")],
        fills=fills,
        prices=[price(M1, day(0), 0.5), price(M1, day(1), 0.6)],
        forecasts=[statement("a", M1, 0.7, day(0)), statement("a", M1, 0.65, day(1))],
        resolutions=[
            resolution(M2, "NO"),
            resolution(M3, "YES"),
            resolution(M4, "VOID"),
            resolution(M5, "NO"),
        ],
    )


def test_stances_give_side_stake_last_statement_and_exact_pnl() -> None:
    row = market_stances(_stances()).filter(agent="a", market_id=M1).row(0, named=True)
    assert (row["side"], row["sides"], row["staked"]) == ("YES", "NO+YES", Decimal(150))
    assert row["stated_yes"] == 0.65 and row["right"] is None and row["resolution"] is None
    # 200 YES shares at 0.6 cost 100 (+20); 100 NO shares at 1 − 0.6 cost 50 (−10).
    assert row["pnl"] == Decimal(10)
    assert market_stances(_stances()).filter(agent="b", market_id=M2)["right"].item() is True


def test_head_to_head_names_who_was_right() -> None:
    stances = market_stances(_stances())
    who = dict(head_to_head(stances, "a", "b").select("market_id", "who_was_right").iter_rows())
    assert who == {M1: "open", M2: "b", M3: "both", M4: "void", M5: "neither"}
    assert head_to_head(stances, "b", "a").filter(market_id=M2)["who_was_right"].item() == "b"
    assert head_to_head(stances, "a", "nobody").is_empty()
