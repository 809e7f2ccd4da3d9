"""Fills are the log: a replay rebuilds the ledger exactly, and a log that breaks the rules is refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from portfolio import Bet, Fill, FillKind, FillRejected, Ledger, Rules, Sell
from tests.portfolio.helpers import BINARY, HOUR, MULTI, OTHER, T0, D, quotes


def _history(ledger: Ledger) -> list[Fill]:
    log = ledger.apply_decision(
        [Bet(BINARY, "YES", D(500)), Bet(MULTI, "Alice", D(250))], quotes("0.40"), T0, decision_id="d1"
    )
    log += ledger.apply_decision(
        [Sell(log[0].position_id, D(100))], quotes("0.55"), T0 + HOUR, decision_id="d2"
    )
    log += ledger.apply_decision(
        [Bet(BINARY, "YES", D(123.45)), Bet(OTHER, "NO", D(77))],
        quotes("0.3"),
        T0 + 2 * HOUR,
        decision_id="d3",
    )
    log += ledger.apply_decision(
        [Sell(log[-1].position_id, D(33))], quotes(), T0 + 3 * HOUR, decision_id="d4"
    )
    log += ledger.apply_decision(
        [Sell(log[3].position_id, D(100))], quotes(), T0 + 3 * HOUR, decision_id="d5"
    )
    log += ledger.settle(MULTI, {"Alice": D(0), "Bob": D(1), "Carol": D(0)}, T0 + 4 * HOUR)
    log += ledger.settle(OTHER, {}, T0 + 4 * HOUR, void=True)
    return log


def test_replaying_the_log_reproduces_the_ledger_exactly(ledger: Ledger) -> None:
    log = _history(ledger)
    rebuilt = Ledger.from_fills(ledger.rules, log, agent_id="agent-1")
    assert rebuilt == ledger
    assert rebuilt.cash == ledger.cash
    assert dict(rebuilt.positions) == dict(ledger.positions)
    assert rebuilt.realized_pnl == ledger.realized_pnl
    # ids keep counting after a replay: the next bet on BINARY YES opens position 3, not 1 or 2
    (bet,) = rebuilt.apply_decision([Bet(BINARY, "YES", D(100))], quotes(), T0 + 5 * HOUR, decision_id="d6")
    assert bet.position_id == f"{BINARY}|YES|3"


def test_a_fill_cannot_be_applied_twice(ledger: Ledger) -> None:
    log = _history(ledger)
    with pytest.raises(FillRejected, match=r"fill buy .*\(decision d3, leg 0\): was already applied"):
        Ledger.from_fills(ledger.rules, [*log[:5], log[3]], agent_id="agent-1")


def test_another_agents_fill_is_refused(ledger: Ledger) -> None:
    (buy,) = Ledger(ledger.rules, "agent-2").apply_decision([Bet(BINARY, "YES", D(100))], quotes(), T0)
    with pytest.raises(FillRejected, match="belongs to agent 'agent-2', not 'agent-1'"):
        ledger.apply_fill(buy)


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (
            lambda f: replace(f, shares=f.shares + D("0.000001")),
            "moves 1250.000001 shares but the position holds 1250",
        ),
        (
            lambda f: replace(f, amount=f.amount + 1, realized_pnl=f.realized_pnl + 1),
            "amount 688.500000 != proceeds 687.500000",
        ),
        (
            lambda f: replace(f, realized_pnl=f.realized_pnl + 1),
            "releases cost basis 499.000000, expected 500",
        ),
        (lambda f: replace(f, position_id="ghost"), "position 'ghost' does not exist"),
        (lambda f: replace(f, outcome="NO"), "belongs to 'polymarket:will-it-rain'/'NO', not to position"),
    ],
)
def test_a_log_that_breaks_the_accounting_rules_is_refused(
    ledger: Ledger, tamper: object, message: str
) -> None:
    log = _history(ledger)
    sell = log[2]
    assert sell.kind is FillKind.SELL
    with pytest.raises(FillRejected, match="fill sell") as error:
        Ledger.from_fills(ledger.rules, [*log[:2], tamper(sell)], agent_id="agent-1")  # type: ignore[operator]
    assert message in str(error.value)


def test_a_buy_with_the_wrong_share_count_is_refused(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes(), T0, decision_id="d1")
    with pytest.raises(FillRejected, match=r"shares 1251 != 1250.000000 bought"):
        Ledger(ledger.rules, "agent-1").apply_fill(replace(buy, shares=D(1251)))


def test_a_buy_cannot_spend_more_cash_than_the_ledger_holds() -> None:
    small = Ledger(Rules(bankroll=D(100), min_bet=D(1)), "agent-1")
    (buy,) = Ledger(Rules(), "agent-1").apply_decision([Bet(BINARY, "YES", D(200))], quotes(), T0)
    with pytest.raises(FillRejected, match="would leave cash at -100"):
        small.apply_fill(buy)
    assert small.cash == D(100) and small.positions == {}


def test_a_closed_position_is_never_reopened_and_a_second_open_position_is_refused(ledger: Ledger) -> None:
    log = _history(ledger)
    first_buy = log[0]
    assert ledger.positions[first_buy.position_id].status.value == "closed"
    with pytest.raises(FillRejected, match=r"position 'polymarket:will-it-rain\|YES\|1' is closed"):
        ledger.apply_fill(replace(first_buy, decision_id="d9", at=T0 + 9 * HOUR))
    (reopened,) = ledger.apply_decision(
        [Bet(BINARY, "YES", D(60))], quotes(), T0 + 9 * HOUR, decision_id="d9"
    )
    with pytest.raises(FillRejected, match=r"opens a second position on 'YES' of '.*'; '.*\|YES\|3' is open"):
        ledger.apply_fill(replace(reopened, decision_id="d10", position_id="another-id"))


def test_a_settled_market_takes_no_buy_fill(ledger: Ledger) -> None:
    log = _history(ledger)
    late = replace(log[1], decision_id="d9", position_id=f"{MULTI}|Alice|2")
    with pytest.raises(FillRejected, match="which is already settled"):
        ledger.apply_fill(late)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"amount": D("-1")}, "amount and fee must not be negative"),
        ({"amount": D("1.0000001")}, "amount must be a finite amount on the 1e-6 grid"),
        ({"fee": D("NaN")}, "fee must be a finite amount"),
        ({"shares": D("0")}, "a fill must move shares"),
        ({"shares": D("1.0000001")}, "shares must be a positive count on the 1e-6 grid"),
        ({"price": None}, "only a void settlement may have no price"),
        ({"max_bet": None}, "must carry its decision's max_bet"),
        ({"realized_pnl": D(1)}, "a buy realises no P/L"),
        ({"kind": "buy"}, "kind must be one of ['buy', 'sell', 'settle']"),
        ({"at": T0.replace(tzinfo=None)}, "at must be timezone-aware"),
        ({"kind": FillKind.SETTLE, "max_bet": None}, "a settlement belongs to no decision"),
    ],
)
def test_a_malformed_fill_cannot_be_built(change: dict[str, object], message: str) -> None:
    (buy,) = Ledger(Rules(), "agent-1").apply_decision(
        [Bet(BINARY, "YES", D(500))], quotes(), T0, decision_id="d1"
    )
    with pytest.raises(ValueError, match="fill ") as error:
        replace(buy, **change)  # type: ignore[arg-type]
    assert message in str(error.value)


def test_cash_delta_and_basis_released_follow_the_kind(ledger: Ledger) -> None:
    log = _history(ledger)
    buy, sell = log[0], log[2]
    assert (buy.cash_delta, buy.basis_released) == (D(-500), 0)
    assert (sell.cash_delta, sell.basis_released) == (D("687.5"), D(500))
    assert sum(f.cash_delta for f in log) == ledger.cash - ledger.rules.bankroll
