"""Marks: value at the side's price, carry the last real price forward (stale), never invent one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from portfolio import Bet, FreshMarks, Ledger, Mark, Sell
from portfolio.valuation import value_position
from tests.portfolio.helpers import BINARY, HOUR, MULTI, OTHER, T0, D, quotes


def _two_positions(ledger: Ledger) -> tuple[str, str]:
    fills = ledger.apply_decision([Bet(BINARY, "NO", D(600)), Bet(MULTI, "Bob", D(300))], quotes("0.40"), T0)
    return fills[0].position_id, fills[1].position_id


def test_positions_are_valued_at_the_price_of_their_own_outcome(ledger: Ledger) -> None:
    no_id, bob_id = _two_positions(ledger)  # 1,000 NO shares, 1,000 Bob shares
    valuation = ledger.mark({BINARY: {"YES": D("0.3"), "NO": D("0.7")}, MULTI: {"Bob": D("0.1")}}, T0 + HOUR)
    values = {v.position_id: v for v in valuation.positions}
    assert (values[no_id].price, values[no_id].value, values[no_id].unrealized_pnl) == (
        D("0.7"),
        D(700),
        D(100),
    )
    assert (values[bob_id].price, values[bob_id].value, values[bob_id].unrealized_pnl) == (
        D("0.1"),
        D(100),
        D(-200),
    )
    assert (valuation.cash, valuation.positions_value, valuation.total_value) == (D(9100), D(800), D(9900))
    assert (valuation.realized_pnl, valuation.unrealized_pnl, valuation.pnl) == (0, D(-100), D(-100))
    assert valuation.stale_count == 0
    assert valuation.return_pct == D(-1)


def test_a_missing_price_keeps_the_last_real_mark_flagged_stale(ledger: Ledger) -> None:
    no_id, bob_id = _two_positions(ledger)
    ledger.mark({BINARY: {"NO": D("0.7")}, MULTI: {"Bob": D("0.1")}}, T0 + HOUR)
    # the NO price disappears (e.g. the market closed); Bob still has one
    valuation = ledger.mark({MULTI: {"Bob": D("0.2")}}, T0 + 2 * HOUR)
    values = {v.position_id: v for v in valuation.positions}
    assert (values[no_id].price, values[no_id].value, values[no_id].stale) == (D("0.7"), D(700), True)
    assert values[no_id].marked_at == T0 + HOUR  # the time of the real price, not of this mark
    assert (values[bob_id].value, values[bob_id].stale) == (D(200), False)
    assert valuation.stale_count == 1
    # a later real price clears the flag
    fresh = ledger.mark({BINARY: {"NO": D("0.9")}}, T0 + 3 * HOUR)
    assert {v.position_id: v.stale for v in fresh.positions} == {no_id: False, bob_id: True}
    assert ledger.positions[no_id].mark == Mark(D("0.9"), T0 + 3 * HOUR)


def test_a_new_position_is_valued_at_its_fill_price_until_marked(ledger: Ledger) -> None:
    _two_positions(ledger)
    valuation = ledger.valuation(T0)
    assert valuation.total_value == D(10000)
    assert valuation.stale_count == 0
    assert ledger.mark({}, T0 + HOUR).stale_count == 2
    assert ledger.valuation(T0 + HOUR).total_value == D(10000)  # never 0.5, never 0


def test_a_position_without_any_price_is_valued_at_cost(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0, decision_id="d1")
    unpriced = replace(ledger.positions[buy.position_id], mark=None)
    value = value_position(unpriced)
    assert (value.price, value.marked_at, value.value, value.stale, value.unrealized_pnl) == (
        None,
        None,
        D(500),
        True,
        0,
    )


def test_a_mark_older_than_the_latest_fill_does_not_overwrite_its_price(ledger: Ledger) -> None:
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0 + HOUR)
    valuation = ledger.mark({BINARY: {"YES": D("0.10")}}, T0)
    assert valuation.positions[0].price == D("0.40")
    assert ledger.positions[buy.position_id].mark == Mark(D("0.40"), T0 + HOUR)


@pytest.mark.parametrize("price", [D("-0.1"), D("1.01"), D("NaN"), 0.5])
def test_a_bad_mark_price_raises_and_marks_nothing(ledger: Ledger, price: object) -> None:
    _two_positions(ledger)
    before = dict(ledger.positions)
    with pytest.raises(
        ValueError, match="mark price for 'NO' of 'polymarket:will-it-rain' must be a Decimal"
    ):
        ledger.mark({MULTI: {"Bob": D("0.2")}, BINARY: {"NO": price}}, T0 + HOUR)  # type: ignore[dict-item]
    assert dict(ledger.positions) == before


def test_prices_of_zero_and_one_are_valid_marks(ledger: Ledger) -> None:
    no_id, bob_id = _two_positions(ledger)
    valuation = ledger.mark({BINARY: {"NO": D(1)}, MULTI: {"Bob": D(0)}}, T0 + HOUR)
    assert {v.position_id: v.value for v in valuation.positions} == {no_id: D(1000), bob_id: D(0)}


def test_restored_marks_survive_a_replay_unless_a_fill_is_newer(ledger: Ledger) -> None:
    log = ledger.apply_decision([Bet(BINARY, "YES", D(500))], quotes("0.40"), T0, decision_id="d1")
    ledger.mark({BINARY: {"YES": D("0.5")}}, T0 + HOUR)
    log += ledger.apply_decision(
        [Bet(OTHER, "YES", D(700))], quotes(other_yes="0.70"), T0 + 2 * HOUR, decision_id="d2"
    )
    ledger.mark({OTHER: {"YES": D("0.8")}}, T0 + 3 * HOUR)  # BINARY has no price now: stale
    stored = {p.position_id: p.mark for p in ledger.open_positions() if p.mark is not None}

    rebuilt = Ledger.from_fills(ledger.rules, log, agent_id="agent-1", marks=stored)
    assert rebuilt == ledger
    old = {log[1].position_id: Mark(D("0.1"), T0)}  # older than the fill at T0 + 2h
    rebuilt.restore_marks(old)
    assert rebuilt.positions[log[1].position_id].mark == stored[log[1].position_id]
    with pytest.raises(ValueError, match="cannot restore a mark for 'nope'"):
        rebuilt.restore_marks({"nope": Mark(D("0.5"), T0)})


def test_naive_times_are_refused(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="has no time zone"):
        ledger.mark({}, T0.replace(tzinfo=None))


def test_shared_fresh_marks_mark_many_ledgers_as_their_own_prices_would(ledger: Ledger) -> None:
    prices = {BINARY: {"NO": D("0.7")}, MULTI: {"Bob": D("0.1")}}
    alone, shared = Ledger(ledger.rules, "agent-2"), Ledger(ledger.rules, "agent-3")
    for each in (alone, shared, ledger):
        _two_positions(each)
    marks = FreshMarks(prices, T0 + HOUR)
    first, second = ledger.mark(marks, T0 + HOUR), shared.mark(marks, T0 + HOUR)
    expected = alone.mark(prices, T0 + HOUR)
    for got in (first, second):
        assert (got.total_value, got.unrealized_pnl, got.stale_count) == (
            expected.total_value,
            expected.unrealized_pnl,
            expected.stale_count,
        )
        assert got.positions == expected.positions
    no_id = next(p.position_id for p in ledger.open_positions() if p.outcome == "NO")
    assert ledger.positions[no_id].mark is shared.positions[no_id].mark  # built once, shared
    with pytest.raises(ValueError, match="marks built for"):
        ledger.mark(marks, T0 + 2 * HOUR)


def test_marking_again_at_the_same_instant_and_price_keeps_the_position(ledger: Ledger) -> None:
    no_id, _ = _two_positions(ledger)
    prices = {BINARY: {"NO": D("0.7")}, MULTI: {"Bob": D("0.1")}}
    ledger.mark(prices, T0 + HOUR)
    before = ledger.positions[no_id]
    ledger.mark(prices, T0 + HOUR)
    assert ledger.positions[no_id] is before
    ledger.mark({BINARY: {"NO": D("0.8")}, MULTI: {"Bob": D("0.1")}}, T0 + HOUR)  # a new price moves it
    assert ledger.positions[no_id].mark == Mark(D("0.8"), T0 + HOUR)


def test_the_kept_list_of_open_positions_follows_marks_and_fills(ledger: Ledger) -> None:
    no_id, bob_id = _two_positions(ledger)
    listed = ledger.open_positions()
    listed.clear()  # a caller's copy: the ledger's own list is untouched
    ledger.mark({BINARY: {"NO": D("0.7")}, MULTI: {"Bob": D("0.1")}}, T0 + HOUR)
    assert [p.mark for p in ledger.open_positions()] == [Mark(D("0.7"), T0 + HOUR), Mark(D("0.1"), T0 + HOUR)]
    ledger.apply_decision([Sell(no_id, D(100))], quotes("0.30"), T0 + 2 * HOUR)  # all of it, NO at 0.70
    assert [p.position_id for p in ledger.open_positions()] == [bob_id]
    assert ledger.open_positions() == [ledger.positions[bob_id]]
