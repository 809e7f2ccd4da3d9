"""Every reason a decision is refused, with the leg it names, and that a refusal changes nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from portfolio import (
    Bet,
    DecisionRejected,
    Fill,
    Ledger,
    LegError,
    MidQuotes,
    Rules,
    Sell,
    Side,
    check_actions,
)
from tests.portfolio.helpers import BINARY, HOUR, MULTI, OTHER, T0, D, quotes

HELD = "<held>"  # placeholders, replaced by real position ids of the ledger below
CLOSED = "<closed>"
FOREIGN = "<foreign>"


def _history(rules: Rules) -> tuple[Ledger, list[Fill], dict[str, str]]:
    """A ledger holding BINARY YES, with a closed OTHER YES position and MULTI settled, and its log."""
    ledger = Ledger(rules, "agent-1")
    log = ledger.apply_decision([Bet(BINARY, "YES", D(400))], quotes(), T0, decision_id="d1")
    log += ledger.apply_decision([Bet(OTHER, "YES", D(100))], quotes(other_yes="0.5"), T0, decision_id="d2")
    log += ledger.apply_decision(
        [Sell(log[-1].position_id, D(100))], quotes(other_yes="0.5"), T0 + HOUR, decision_id="d3"
    )
    log += ledger.apply_decision([Bet(MULTI, "Bob", D(100))], quotes(), T0 + HOUR, decision_id="d4")
    log += ledger.settle(MULTI, {"Alice": D(1), "Bob": D(0), "Carol": D(0)}, T0 + 2 * HOUR)
    (foreign,) = Ledger(rules, "agent-2").apply_decision([Bet(OTHER, "NO", D(100))], quotes(), T0)
    ids = {HELD: log[0].position_id, CLOSED: log[1].position_id, FOREIGN: foreign.position_id}
    return ledger, log, ids


def _fee(rate: str) -> object:
    def fee(market_id: str, outcome: str, side: Side, notional: Decimal, price: Decimal) -> Decimal:
        return notional * D(rate)

    return fee


NO_PRICES = MidQuotes(
    {BINARY: {"YES": D("0.4")}},
    outcomes={BINARY: ("YES", "NO"), OTHER: ("YES", "NO"), MULTI: ("Alice", "Bob", "Carol")},
)


def _bad_price(price: Decimal) -> MidQuotes:
    return MidQuotes({BINARY: {"YES": price, "NO": D("0.5")}})


CASES: list[tuple[str, list[object], MidQuotes | None, int, str]] = [
    ("unknown market", [Bet("polymarket:nope", "YES", D(100))], None, 0, "unknown market 'polymarket:nope'"),
    ("not an outcome", [Bet(BINARY, "MAYBE", D(100))], None, 0, "'MAYBE' is not an outcome of"),
    (
        "multi outcome name",
        [Bet(MULTI, "Dave", D(100))],
        None,
        0,
        "expected one of ['Alice', 'Bob', 'Carol']",
    ),
    ("missing price", [Bet(OTHER, "YES", D(100))], NO_PRICES, 0, "no price for 'YES' of 'manifold:other"),
    ("NaN price", [Bet(BINARY, "YES", D(100))], _bad_price(D("NaN")), 0, "price Decimal('NaN') of 'YES'"),
    (
        "zero price",
        [Bet(BINARY, "YES", D(100))],
        _bad_price(D(0)),
        0,
        "is not a Decimal strictly between 0 and 1",
    ),
    ("price of one", [Bet(BINARY, "YES", D(100))], _bad_price(D(1)), 0, "price Decimal('1') of 'YES'"),
    ("price above one", [Bet(BINARY, "YES", D(100))], _bad_price(D("1.2")), 0, "price Decimal('1.2') of"),
    ("float price", [Bet(BINARY, "YES", D(100))], _bad_price(0.4), 0, "price 0.4 of"),  # type: ignore[arg-type]
    ("NaN amount", [Bet(BINARY, "YES", D("NaN"))], None, 0, "amount must be a finite decimal"),
    ("infinite amount", [Bet(BINARY, "YES", D("Infinity"))], None, 0, "got Decimal('Infinity')"),
    ("float amount", [Bet(BINARY, "YES", 100.0)], None, 0, "got 100.0"),  # type: ignore[arg-type]
    ("below min bet", [Bet(BINARY, "YES", D("49.99"))], None, 0, "$49.99 is below the minimum bet $50.00"),
    ("negative amount", [Bet(BINARY, "YES", D(-100))], None, 0, "-$100.00 is below the minimum bet"),
    (
        "above max bet",
        [Bet(BINARY, "NO", D("2375.01"))],
        None,
        0,
        "$2,375.01 is above the maximum bet $2,375.00 (25% of cash $9,500.00)",
    ),
    (
        "bets exceed cash",
        [
            Bet(BINARY, "NO", D(2375)),
            Bet(OTHER, "YES", D(2375)),
            Bet(OTHER, "NO", D(2375)),
            Bet(MULTI + "2", "Alice", D(2375)),
            Bet("polymarket:fifth", "YES", D(50)),
        ],
        MidQuotes(
            {
                BINARY: {"YES": D("0.4"), "NO": D("0.6")},
                OTHER: {"YES": D("0.4"), "NO": D("0.6")},
                MULTI + "2": {"Alice": D("0.5")},
                "polymarket:fifth": {"YES": D("0.5")},
            }
        ),
        4,
        "bets up to this leg total $9,550.00, more than the cash $9,500.00",
    ),
    ("bet twice on one outcome", [Bet(BINARY, "NO", D(60)), Bet(BINARY, "NO", D(70))], None, 1, "(leg 1)"),
    ("bet on a settled market", [Bet(MULTI, "Alice", D(100))], None, 0, "has already been settled"),
    ("sell unknown position", [Sell("made-up", D(50))], None, 0, "'made-up' is not an open position"),
    (
        "sell a closed position",
        [Sell(CLOSED, D(50))],
        None,
        0,
        "|YES|1' is not an open position of this agent",
    ),
    ("sell another agent's position", [Sell(FOREIGN, D(50))], None, 0, "|NO|1' is not an open position"),
    ("sell twice", [Sell(HELD, D(50)), Sell(HELD, D(20))], None, 1, "sells position"),
    (
        "bet and sell one outcome",
        [Sell(HELD, D(50)), Bet(BINARY, "YES", D(60))],
        None,
        1,
        "which leg 1 sells",
    ),
    (
        "sell and bet one outcome",
        [Bet(BINARY, "YES", D(60)), Sell(HELD, D(50))],
        None,
        1,
        "which leg 1 bets on",
    ),
    ("percent zero", [Sell(HELD, D(0))], None, 0, "percent must be a number in (0, 100], got Decimal('0')"),
    ("percent negative", [Sell(HELD, D(-5))], None, 0, "percent must be a number in (0, 100]"),
    ("percent above 100", [Sell(HELD, D("100.5"))], None, 0, "got Decimal('100.5')"),
    ("percent NaN", [Sell(HELD, D("NaN"))], None, 0, "got Decimal('NaN')"),
    ("sell a market no longer quoted", [Sell(HELD, D(50))], MidQuotes({}), 0, "is not open for trading"),
    (
        "sell without a price",
        [Sell(HELD, D(50))],
        MidQuotes({BINARY: {"NO": D("0.6")}}, outcomes={BINARY: ("YES", "NO")}),
        0,
        "no price for 'YES'",
    ),
    ("sell too little", [Sell(HELD, D("0.00000001"))], None, 0, "sells no shares"),
    (
        "fee eats the bet",
        [Bet(BINARY, "NO", D(100))],
        MidQuotes({BINARY: {"NO": D("0.6")}}, fee=_fee("1")),
        0,
        "leaves no shares to buy",
    ),  # type: ignore[arg-type]
    (
        "fee eats the sale",
        [Sell(HELD, D(50))],
        MidQuotes({BINARY: {"YES": D("0.6")}}, fee=_fee("1.5")),
        0,
        "exceeds the proceeds",
    ),  # type: ignore[arg-type]
    ("not an action", ["BET 100 on YES"], None, 0, "is a str, expected a Bet or a Sell"),
]


@pytest.mark.parametrize(
    ("actions", "priced", "leg", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_rejection_names_the_leg_and_leaves_the_ledger_unchanged(
    rules: Rules, actions: list[object], priced: MidQuotes | None, leg: int, expected: str
) -> None:
    ledger, log, ids = _history(rules)
    before = Ledger.from_fills(rules, log, agent_id="agent-1")
    assert before == ledger  # the copy really equals the ledger
    legs = [
        Sell(ids[a.position_id], a.percent) if isinstance(a, Sell) and a.position_id in ids else a
        for a in actions
    ]

    with pytest.raises(DecisionRejected) as rejected:
        ledger.apply_decision(legs, priced or quotes(), T0 + 3 * HOUR, decision_id="bad")  # type: ignore[arg-type]

    assert [e.leg for e in rejected.value.errors] == [leg]
    (error,) = rejected.value.errors
    assert expected in error.reason, error.reason
    assert error.reason.startswith(f"leg {leg + 1} (")
    assert ledger == before


def test_all_problems_of_all_legs_are_reported_together(ledger: Ledger) -> None:
    actions = [
        Bet(BINARY, "YES", D(10)),
        Bet("polymarket:nope", "YES", D(9000)),
        Sell("nothing", D(150)),
        Bet(BINARY, "NO", D(100)),
    ]
    with pytest.raises(DecisionRejected) as rejected:
        ledger.apply_decision(actions, quotes(), T0)
    reasons = [(e.leg, e.reason.split(": ", 1)[1]) for e in rejected.value.errors]
    assert reasons == [
        (0, "amount $10.00 is below the minimum bet $50.00"),
        (1, "unknown market 'polymarket:nope' (not among the markets open for betting)"),
        (1, "amount $9,000.00 is above the maximum bet $2,500.00 (25% of cash $10,000.00)"),
        (2, "position 'nothing' is not an open position of this agent (unknown or closed)"),
    ]
    assert "leg 4" not in str(rejected.value)
    assert ledger == Ledger(ledger.rules, "agent-1")


def test_agents_can_check_their_own_actions_with_plain_position_tuples() -> None:
    positions = {"p1": (BINARY, "YES", D(1000))}
    ok = check_actions(
        [Sell("p1", D(100)), Bet(OTHER, "NO", D(2500))],
        cash=D(10000),
        rules=Rules(),
        quotes=quotes(),
        positions=positions,
    )
    assert ok == []
    refused = check_actions(
        [Bet(OTHER, "NO", D(2500)), Bet(BINARY, "NO", D(2500))],
        cash=D(4000),
        rules=Rules(max_bet_fraction=D(1)),
        quotes=quotes(),
        positions=positions,
    )
    assert refused == [
        LegError(
            1,
            "leg 2 (bet $2,500.00 on 'NO' of 'polymarket:will-it-rain'): "
            "bets up to this leg total $5,000.00, more than the cash $4,000.00 "
            "at the start of the decision (sells do not fund bets in the same decision)",
        )
    ]


def test_sell_proceeds_do_not_fund_bets_of_the_same_decision(rules: Rules) -> None:
    ledger = Ledger(Rules(bankroll=D(1000), max_bet_fraction=D(1)), "agent-1")
    (buy,) = ledger.apply_decision([Bet(BINARY, "YES", D(1000))], quotes("0.5"), T0)
    assert ledger.cash == 0
    errors = ledger.check([Sell(buy.position_id, D(100)), Bet(OTHER, "YES", D(100))], quotes("0.5"))
    assert [e.leg for e in errors] == [1]
    assert "above the maximum bet $0.00" in errors[0].reason


def test_holding_is_an_empty_decision(ledger: Ledger) -> None:
    assert ledger.apply_decision([], quotes(), T0, decision_id="hold") == []
    assert ledger == Ledger(ledger.rules, "agent-1")


def test_a_closed_market_is_neither_bought_nor_sold_and_each_leg_says_when_it_closed(rules: Rules) -> None:
    ledger, log, ids = _history(rules)
    before = Ledger.from_fills(rules, log, agent_id="agent-1")
    closed = {BINARY: T0 + 2 * HOUR}  # the held market closed; it is still quoted (the check wins)
    legs = [Sell(ids[HELD], D(50)), Bet(BINARY, "NO", D(100)), Bet(OTHER, "YES", D(100))]
    with pytest.raises(DecisionRejected) as rejected:
        ledger.apply_decision(legs, quotes(), T0 + 3 * HOUR, closed_markets=closed)
    reasons = [(e.leg, e.reason.split(": ", 1)[1]) for e in rejected.value.errors]
    why = f"market '{BINARY}' closed at 2025-03-01T14:00:00+00:00: a closed market is not traded"
    assert [(leg, reason[: len(why)]) for leg, reason in reasons] == [(0, why), (1, why)]
    assert ledger == before  # the open leg on OTHER did not execute either: all legs or none
    # without the closure the same decision executes (it was refused for the closure alone)
    assert len(ledger.apply_decision(legs[1:], quotes(), T0 + 3 * HOUR)) == 2
