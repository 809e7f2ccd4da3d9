"""Settlement: winners $1, losers $0, 50-50 $0.50, void refunds the remaining cost, re-runs do nothing."""

from __future__ import annotations

import pytest

from portfolio import Bet, FillKind, Ledger, PositionStatus, Sell, SettlementRejected
from tests.portfolio.helpers import BINARY, HOUR, MULTI, OTHER, T0, D, quotes

YES_WINS = {"YES": D(1), "NO": D(0)}


def test_void_refunds_the_remaining_cost_basis_after_a_partial_sell(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0)
    (sell,) = ledger.apply_decision([Sell(buy.position_id, D(20))], quotes("0.50"), T0 + HOUR)
    assert sell.realized_pnl == D(25)  # 250 shares × 0.50 − $100 of basis
    (refund,) = ledger.settle(BINARY, {}, T0 + 2 * HOUR, void=True)
    assert (refund.kind, refund.amount, refund.price, refund.realized_pnl) == (
        FillKind.SETTLE,
        D(400),
        None,
        0,
    )
    assert refund.shares == D(1000)
    assert ledger.cash == D(10025)  # only the sell's profit remains
    assert ledger.positions[buy.position_id].status is PositionStatus.SETTLED


def test_fifty_fifty_pays_half_a_dollar_per_share(ledger: Ledger) -> None:
    fills = ledger.apply_decision(
        [Bet(BINARY, "YES", D(400)), Bet(OTHER, "NO", D(300))], quotes("0.40", "0.70"), T0
    )
    assert [f.shares for f in fills] == [D(1000), D(1000)]
    half = {"YES": D("0.5"), "NO": D("0.5")}
    (settled,) = ledger.settle(BINARY, half, T0 + HOUR)
    assert (settled.amount, settled.price, settled.realized_pnl) == (D(500), D("0.5"), D(100))
    (other,) = ledger.settle(OTHER, half, T0 + HOUR)
    assert (other.amount, other.realized_pnl) == (D(500), D(200))
    assert ledger.cash == D(10300)


def test_fifty_fifty_truncates_odd_micro_shares_to_the_micro_dollar(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(100))], quotes("0.3"), T0)
    assert buy.shares == D("333.333333")
    (settled,) = ledger.settle(BINARY, {"YES": D("0.5"), "NO": D("0.5")}, T0 + HOUR)
    assert settled.amount == D("166.666666")  # 166.6666665 truncated


def test_multi_outcome_pays_only_the_winner(ledger: Ledger) -> None:
    fills = ledger.apply_decision(
        [Bet(MULTI, "Alice", D(500)), Bet(MULTI, "Bob", D(300)), Bet(BINARY, "YES", D(100))], quotes(), T0
    )
    settled = ledger.settle(MULTI, {"Alice": D(0), "Bob": D(1), "Carol": D(0)}, T0 + HOUR)
    assert [(f.position_id, f.amount, f.realized_pnl) for f in settled] == [
        (fills[0].position_id, D(0), D(-500)),
        (fills[1].position_id, D(1000), D(700)),
    ]
    assert [f.leg_index for f in settled] == [0, 1]
    assert [p.market_id for p in ledger.open_positions()] == [BINARY]  # other markets are untouched


def test_settling_again_is_a_no_op_even_with_other_payouts(ledger: Ledger) -> None:
    ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0)
    assert len(ledger.settle(BINARY, YES_WINS, T0 + HOUR)) == 1
    assert ledger.settled_markets == {BINARY}
    assert ledger.settle(BINARY, {"YES": D(0), "NO": D(1)}, T0 + 2 * HOUR) == []
    assert ledger.settle(BINARY, {}, T0 + 2 * HOUR, void=True) == []
    assert ledger.cash == D(10750)
    assert ledger.realized_pnl == D(750)


def test_settling_a_market_without_positions_changes_nothing(ledger: Ledger) -> None:
    ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0)
    assert ledger.settle(OTHER, YES_WINS, T0 + HOUR) == []
    assert ledger.cash == D(9500)
    assert ledger.settled_markets == frozenset()


@pytest.mark.parametrize(
    ("payouts", "message"),
    [
        ({"YES": D(1)}, "payout for outcome 'NO' must be a Decimal in [0, 1], got None"),
        ({"YES": D(1), "NO": D("1.5")}, "got Decimal('1.5')"),
        ({"YES": D(1), "NO": D("NaN")}, "got Decimal('NaN')"),
    ],
)
def test_a_missing_or_invalid_payout_raises_before_anything_is_paid(
    ledger: Ledger, payouts: dict[str, D], message: str
) -> None:
    ledger.apply_decision([Bet(BINARY, "YES", D(500)), Bet(BINARY, "NO", D(300))], quotes("0.40"), T0)
    before = ledger.cash
    with pytest.raises(SettlementRejected, match="settling 'polymarket:will-it-rain'") as error:
        ledger.settle(BINARY, payouts, T0 + HOUR)
    assert message in str(error.value)
    assert ledger.cash == before
    assert len(ledger.open_positions()) == 2


def test_a_settled_market_takes_no_new_bets(ledger: Ledger) -> None:
    ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0)
    ledger.settle(BINARY, YES_WINS, T0 + HOUR)
    errors = ledger.check([Bet(BINARY, "NO", D(100))], quotes("0.40"))
    assert [e.reason.split(": ", 1)[1] for e in errors] == [f"market {BINARY!r} has already been settled"]
