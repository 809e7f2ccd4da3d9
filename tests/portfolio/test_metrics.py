"""The scoring formulas on Forecaster Arena's worked numbers, for binary and multi-outcome markets."""

from __future__ import annotations

import pytest

from portfolio import Bet, Ledger, Rules, metrics
from tests.portfolio.helpers import BINARY, MULTI, T0, D, quotes

YES_WON = {"YES": D(1), "NO": D(0)}
NO_WON = {"YES": D(0), "NO": D(1)}
SPLIT = {"YES": D("0.5"), "NO": D("0.5")}


def test_implied_confidence_is_amount_over_max_bet() -> None:
    assert metrics.implied_confidence(D(500), D(2500)) == D("0.2")
    assert metrics.implied_confidence(D(2500), D(2500)) == 1
    with pytest.raises(ValueError, match="outside"):
        metrics.implied_confidence(D(2600), D(2500))
    with pytest.raises(ValueError, match="max_bet must be positive"):
        metrics.implied_confidence(D(50), D(0))


def test_f_yes_flips_for_no_bets_only_in_binary_markets() -> None:
    assert metrics.f_yes("YES", D("0.2"), binary=True) == D("0.2")
    assert metrics.f_yes("NO", D("0.2"), binary=True) == D("0.8")
    assert metrics.f_yes("Bob", D("0.2"), binary=False) == D("0.2")
    with pytest.raises(ValueError, match="'YES' or 'NO', got 'yes'"):
        metrics.f_yes("yes", D("0.2"), binary=True)


def test_brier_bounds() -> None:
    assert metrics.brier(D(1), D(1)) == 0
    assert metrics.brier(D("0.5"), D(0)) == D("0.25")
    assert metrics.brier(D(0), D(1)) == 1
    assert metrics.brier(D("0.2"), D(1)) == D("0.64")
    with pytest.raises(ValueError, match="forecast must lie in"):
        metrics.brier(D("1.1"), D(1))


def test_bet_brier_of_the_worked_example_and_of_a_no_bet() -> None:
    ledger = Ledger(Rules(), "a")
    yes, no = ledger.apply_decision([Bet(BINARY, "YES", D(500)), Bet(BINARY, "NO", D(1000))], quotes(), T0)
    # 20% confidence in YES; YES wins: (0.2 − 1)² = 0.64
    assert metrics.bet_brier(yes, YES_WON, binary=True) == D("0.64")
    # 40% confidence in NO means f_YES = 0.6; YES wins: (0.6 − 1)² = 0.16; NO wins: 0.36
    assert metrics.bet_brier(no, YES_WON, binary=True) == D("0.16")
    assert metrics.bet_brier(no, NO_WON, binary=True) == D("0.36")
    assert metrics.bet_brier(no, SPLIT, binary=True) == D("0.01")


def test_multi_outcome_brier_scores_the_bet_outcome_against_whether_it_won() -> None:
    ledger = Ledger(Rules(), "a")
    (bob,) = ledger.apply_decision([Bet(MULTI, "Bob", D(2000))], quotes(), T0)  # 80% on Bob
    assert metrics.bet_brier(bob, {"Alice": D(0), "Bob": D(1), "Carol": D(0)}, binary=False) == D("0.04")
    assert metrics.bet_brier(bob, {"Alice": D(1), "Bob": D(0), "Carol": D(0)}, binary=False) == D("0.64")
    with pytest.raises(ValueError, match="no entry for 'Bob'"):
        metrics.bet_brier(bob, {"Alice": D(1)}, binary=False)


def test_bet_won_counts_only_decisive_resolutions() -> None:
    assert metrics.bet_won("YES", YES_WON) is True
    assert metrics.bet_won("NO", YES_WON) is False
    assert metrics.bet_won("YES", SPLIT) is None
    assert metrics.bet_won("YES", {}, void=True) is None
    assert metrics.bet_won("Carol", {"Alice": D(0), "Bob": D(0), "Carol": D(1)}) is True


def test_value_and_pnl_helpers() -> None:
    assert metrics.position_value(D("333.333333"), D("0.3")) == D("99.999999")
    assert metrics.unrealized_pnl(D(700), D(600)) == D(100)
    assert metrics.portfolio_value(D(9000), [D(700), D(400)]) == D(10100)
    assert metrics.pnl(D(10100), D(10000)) == D(100)
    assert metrics.return_pct(D(10750), D(10000)) == D("7.5")


def test_realized_pnl_sums_the_log() -> None:
    ledger = Ledger(Rules(), "a")
    log = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0)
    log += ledger.settle(BINARY, YES_WON, T0)
    assert metrics.realized_pnl(log) == D(750) == ledger.realized_pnl


def test_kelly_implied_probability_inverts_the_kelly_stake() -> None:
    # $500 on YES at 0.40 with $10,000 cash: φ = 0.05, P = 0.40 + 0.05 · 0.60 = 0.43.
    assert metrics.kelly_implied(D("0.40"), D(500), D(10000)) == D("0.43")
    # Check against f* = (q − p) / (1 − p): at q = 0.43, f* = 0.03 / 0.60 = 0.05 = φ.
    assert (D("0.43") - D("0.40")) / (1 - D("0.40")) == D("0.05")
    # All the cash on one side reads as certainty; no stake reads as the price itself.
    assert metrics.kelly_implied(D("0.25"), D(400), D(400)) == 1
    assert metrics.kelly_implied(D("0.25"), D(0), D(400)) == D("0.25")
    with pytest.raises(ValueError, match=r"amount 500 is outside \[0, cash 400\]"):
        metrics.kelly_implied(D("0.25"), D(500), D(400))
    with pytest.raises(ValueError, match=r"price must lie in \(0, 1\), got 1"):
        metrics.kelly_implied(D(1), D(5), D(400))
