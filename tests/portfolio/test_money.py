"""The precision rules: micro-dollar money, micro-share counts, rounding in the house's favour."""

from __future__ import annotations

from decimal import Decimal, localcontext

from portfolio import Bet, Ledger, MidQuotes, Rules
from portfolio.money import (
    fmt_money,
    is_decimal,
    is_mark_price,
    is_tradable_price,
    money_down,
    money_up,
    on_money_grid,
    shares_down,
)
from portfolio.positions import shares_bought
from tests.portfolio.helpers import T0

D = Decimal


def test_quantizers_truncate_or_round_up_to_one_millionth() -> None:
    assert money_down(D("1.2345679")) == D("1.234567")
    assert money_down(D("-1.2345679")) == D("-1.234567")
    assert money_up(D("1.2345671")) == D("1.234568")
    assert shares_down(D("333.3333339")) == D("333.333333")
    assert on_money_grid(D("1.000000")) and on_money_grid(D("1E+3")) and not on_money_grid(D("0.0000001"))
    assert not on_money_grid(D("NaN"))


def test_share_counts_are_exact_floors_whatever_the_callers_context() -> None:
    with localcontext() as ctx:
        ctx.prec = 5
        assert shares_bought(D("100"), D(0), D("0.3")) == D("333.333333")
        assert shares_bought(D("99999999.99"), D("0.01"), D("0.7")) == D("142857142.828571")
    # 0.9 / 0.30000000000000000000000000001 = 2.99999999999999999999999999990...: at the default 28
    # digits it rounds up to 3; the exact floor keeps the buy from getting a share it did not pay for
    price = D("0.30000000000000000000000000001")
    assert D("0.9") / price == 3
    assert shares_bought(D("0.9"), D(0), price) == D("2.999999")


def test_a_ledger_in_a_low_precision_context_computes_exactly_the_same() -> None:
    def run() -> tuple[Decimal, Decimal]:
        ledger = Ledger(Rules(bankroll=D("123456789.123456")), "a")
        (buy,) = ledger.apply_decision(
            [Bet("m", "YES", D("30864197.28"))], MidQuotes({"m": {"YES": D("0.37")}}), T0
        )
        ledger.settle("m", {"YES": D("0.5")}, T0)
        return buy.shares, ledger.cash

    expected = run()
    with localcontext() as ctx:
        ctx.prec = 6
        assert run() == expected


def test_type_and_price_predicates() -> None:
    assert is_decimal(D(5)) and is_decimal(5)
    assert (
        not is_decimal(5.0) and not is_decimal("5") and not is_decimal(True) and not is_decimal(D("Infinity"))
    )
    assert is_tradable_price(D("0.01")) and not is_tradable_price(D(0)) and not is_tradable_price(D(1))
    assert not is_tradable_price(0.5)
    assert is_mark_price(D(0)) and is_mark_price(D(1)) and not is_mark_price(D("1.000001"))


def test_money_is_displayed_to_cents_unless_cents_would_hide_a_difference() -> None:
    assert fmt_money(D(2500)) == "$2,500.00"
    assert fmt_money(D("-12.5")) == "-$12.50"
    assert fmt_money(D("49.999999")) == "$49.999999"
    assert fmt_money(D("NaN")) == "NaN"
