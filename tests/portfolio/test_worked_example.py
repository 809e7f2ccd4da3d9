"""Forecaster Arena's worked example, end to end, and the basic buy/sell accounting around it."""

from __future__ import annotations

from decimal import Decimal

from portfolio import Bet, FillKind, Ledger, MidQuotes, PositionStatus, Sell
from portfolio.metrics import implied_confidence
from tests.portfolio.helpers import BINARY, HOUR, MULTI, OTHER, T0, D, quotes


def test_design_worked_example(ledger: Ledger) -> None:
    # $500 on YES at 0.40 buys 1,250 shares; YES wins and pays $1,250: +$750.
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0, decision_id="d1")
    assert (buy.kind, buy.amount, buy.shares, buy.price) == (FillKind.BUY, D(500), D(1250), D("0.40"))
    assert buy.max_bet == D(2500)
    assert implied_confidence(buy.amount, buy.max_bet) == D("0.2")
    assert ledger.cash == D(9500)

    (settle,) = ledger.settle(BINARY, {"YES": D(1), "NO": D(0)}, T0 + HOUR)
    assert (settle.kind, settle.amount, settle.realized_pnl) == (FillKind.SETTLE, D(1250), D(750))
    assert ledger.cash == D(10750)
    assert ledger.realized_pnl == D(750)
    position = ledger.positions[buy.position_id]
    assert (position.status, position.shares, position.cost_basis, position.mark) == (
        PositionStatus.SETTLED,
        0,
        0,
        None,
    )
    assert ledger.valuation(T0 + HOUR).total_value == D(10750)


def test_no_bet_buys_the_no_side_at_its_own_price(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "NO", D(600))], quotes("0.40"), T0)
    assert buy.price == D("0.60")
    assert buy.shares == D(1000)
    (settle,) = ledger.settle(BINARY, {"YES": D(1), "NO": D(0)}, T0 + HOUR)
    assert settle.amount == 0
    assert settle.realized_pnl == D(-600)
    assert ledger.cash == D(9400)


def test_a_second_bet_adds_to_the_open_position_at_average_cost(ledger: Ledger) -> None:
    first = ledger.apply_decision([Bet(BINARY, "YES", D(400))], quotes("0.40"), T0, decision_id="d1")
    second = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.50"), T0 + HOUR, decision_id="d2")
    assert first[0].position_id == second[0].position_id == f"{BINARY}|YES|1"
    position = ledger.positions[first[0].position_id]
    assert position.shares == D(2000)  # 1,000 at 0.40 + 1,000 at 0.50
    assert position.cost_basis == D(900)
    assert position.avg_cost == D("0.45")
    assert position.mark is not None and position.mark.price == D("0.50")


def test_partial_sell_realises_pnl_against_average_cost_and_remarks_at_the_sell_price(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0)
    (sell,) = ledger.apply_decision([Sell(buy.position_id, D(40))], quotes("0.60"), T0 + HOUR)
    assert sell.shares == D(500)  # 40% of 1,250
    assert sell.amount == D(300)  # 500 × 0.60
    assert sell.realized_pnl == D(100)  # 300 − 40% of the $500 basis
    position = ledger.positions[buy.position_id]
    assert (position.shares, position.cost_basis, position.realized_pnl) == (D(750), D(300), D(100))
    assert position.status is PositionStatus.OPEN
    assert position.mark is not None and (position.mark.price, position.mark.at) == (D("0.60"), T0 + HOUR)
    assert ledger.cash == D(9800)
    valuation = ledger.valuation(T0 + HOUR)
    assert valuation.positions_value == D(450)  # 750 × 0.60
    assert valuation.unrealized_pnl == D(150)
    assert valuation.total_value == D(10250) == valuation.bankroll + valuation.pnl
    assert valuation.return_pct == D("2.5")


def test_selling_everything_closes_the_position_and_a_new_bet_opens_a_new_one(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0, decision_id="d1")
    (sell,) = ledger.apply_decision(
        [Sell(buy.position_id, D(100))], quotes("0.20"), T0 + HOUR, decision_id="d2"
    )
    assert (sell.shares, sell.amount, sell.realized_pnl) == (D(1250), D(250), D(-250))
    closed = ledger.positions[buy.position_id]
    assert (closed.status, closed.shares, closed.cost_basis, closed.mark) == (
        PositionStatus.CLOSED,
        0,
        0,
        None,
    )
    assert closed.closed_at == T0 + HOUR
    assert ledger.open_positions() == []

    (again,) = ledger.apply_decision(
        [Bet(BINARY, "YES", D(100))], quotes("0.25"), T0 + 2 * HOUR, decision_id="d3"
    )
    assert again.position_id == f"{BINARY}|YES|2"
    reopened = ledger.positions[again.position_id]
    assert (reopened.shares, reopened.cost_basis, reopened.realized_pnl) == (D(400), D(100), D(0))
    # the closed position keeps its own history, untouched by the new buy
    assert ledger.positions[buy.position_id] == closed
    assert ledger.realized_pnl == D(-250)


def test_a_decision_with_several_legs_executes_them_all(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0, decision_id="d1")
    fills = ledger.apply_decision(
        [Bet(OTHER, "NO", D(300)), Sell(buy.position_id, D(50)), Bet(MULTI, "Carol", D(2375))],
        quotes("0.50"),
        T0 + HOUR,
        decision_id="d2",
    )
    assert [(f.leg_index, f.kind, f.decision_id) for f in fills] == [
        (0, FillKind.BUY, "d2"),
        (1, FillKind.SELL, "d2"),
        (2, FillKind.BUY, "d2"),
    ]
    # every buy of the decision shares the max bet of its starting cash ($9,500 × 25%)
    assert fills[0].max_bet == fills[2].max_bet == D(2375)
    assert ledger.cash == D(9500) - 300 + D("312.5") - 2375
    assert fills[2].shares == D(11875)


def test_fees_come_out_of_the_bet_and_off_the_proceeds(ledger: Ledger) -> None:
    def two_percent(market_id: str, outcome: str, side: object, notional: Decimal, price: Decimal) -> Decimal:
        return notional * D("0.02")

    priced = MidQuotes({BINARY: {"YES": D("0.40"), "NO": D("0.60")}}, fee=two_percent)
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], priced, T0)
    assert (buy.amount, buy.fee, buy.shares) == (D(500), D(10), D(1225))  # (500 − 10) / 0.40
    assert ledger.cash == D(9500)
    assert ledger.positions[buy.position_id].cost_basis == D(500)  # the fee is part of the cost
    (sell,) = ledger.apply_decision([Sell(buy.position_id, D(100))], priced, T0 + HOUR)
    assert (sell.fee, sell.amount) == (D("9.8"), D("480.2"))  # 2% of 1,225 × 0.40 = $490
    assert sell.realized_pnl == D("-19.8")  # both fees, nothing else: the price did not move
    assert ledger.cash == D("9980.2")


def test_shares_are_truncated_so_a_buy_never_gets_more_than_it_paid_for(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(100))], quotes("0.3"), T0)
    assert buy.shares == D("333.333333")
    assert buy.shares * buy.price <= buy.amount
    assert buy.amount - buy.shares * buy.price < D("0.000001")


def test_amounts_below_the_micro_dollar_are_truncated(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D("100.0000009"))], quotes("0.5"), T0)
    assert buy.amount == D("100.000000")
    assert ledger.cash == D("9900")
