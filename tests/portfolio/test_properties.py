"""Property tests: random decisions, price moves, marks and settlements against the ledger's invariants.

A hypothesis state machine drives one ledger through valid and invalid decisions (with and
without fees), marks and resolutions, and checks after every step that cash never goes
negative, every fill conserves value at its price within one micro-dollar, sells never exceed
the shares held, settlements pay exactly shares × payout (or refund the cost basis), rejected
decisions change nothing, the P/L decomposition is exact, and replaying the log (plus the
stored marks) rebuilds the very same ledger.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_DOWN, Context, Decimal

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from portfolio import Bet, DecisionRejected, Fill, FillKind, Ledger, MidQuotes, Rules, Sell, Side
from portfolio.money import MONEY_QUANTUM
from tests.portfolio.helpers import T0, D

BINARY = ("YES", "NO")
MULTI = ("Alice", "Bob", "Carol")

prices = st.one_of(
    st.integers(1, 9999).map(lambda n: D(n).scaleb(-4)),
    st.decimals(min_value=D("0.001"), max_value=D("0.999"), places=15),
)
amounts = st.one_of(
    st.integers(100, 20_000).map(lambda n: D(n).scaleb(-2)),  # $1 to $200: valid while cash lasts
    st.integers(1_000_000, 200_000_000).map(lambda n: D(n).scaleb(-6)),
    st.integers(10_000_000, 2_000_000_000).map(lambda n: D(n).scaleb(-7)),  # below the grid: truncated
)
bad_amounts = st.one_of(st.integers(0, 999).map(lambda n: D(n).scaleb(-3)), st.integers(501, 5000).map(D))
percents = st.one_of(
    st.integers(1, 100).map(D),
    st.just(D(100)),
    st.decimals(min_value=D("0.0001"), max_value=D(100), places=4),
)
bad_percents = st.sampled_from([D(0), D(-5), D("100.01"), D("1E-9")])


def polymarket_like_fee(
    market_id: str, outcome: str, side: Side, notional: Decimal, price: Decimal
) -> Decimal:
    """4% × (1 − p) of the notional: C × rate × p(1 − p) with C = notional / p shares."""
    return notional * D("0.04") * (1 - price)


def _times(a: Decimal, b: Decimal) -> Decimal:
    """Exact product (the default 28 digits could round a product up across a micro-dollar)."""
    return Context(prec=100).multiply(a, b)


def _within_one_quantum(paid: Decimal, worth: Decimal) -> bool:
    """``paid`` is ``worth`` truncated: never more, less by under one micro-dollar."""
    return D(0) <= worth - paid < MONEY_QUANTUM


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.rules = Rules(bankroll=D(1000), min_bet=D(1), max_bet_fraction=D("0.5"))
        self.ledger = Ledger(self.rules, "agent-1")
        self.log: list[Fill] = []
        self.markets: dict[str, tuple[str, ...]] = {}
        self.prices: dict[str, dict[str, Decimal]] = {}
        self.now = T0
        self.decisions = 0
        for _ in range(3):
            self._list_market(BINARY)
        self._list_market(MULTI)

    def _list_market(self, outcomes: tuple[str, ...]) -> None:
        market = f"polymarket:m{len(self.markets) + len(self.ledger.settled_markets)}-{self.decisions}"
        self.markets[market] = outcomes
        self.prices[market] = {o: D(1) / len(outcomes) for o in outcomes}

    def _tick(self) -> None:
        self.now += timedelta(minutes=5)

    def _copy(self) -> Ledger:
        marks = {p.position_id: p.mark for p in self.ledger.open_positions() if p.mark is not None}
        return Ledger.from_fills(self.rules, self.log, agent_id="agent-1", marks=marks)

    @rule(data=st.data())
    def move_prices(self, data: st.DataObject) -> None:
        market = data.draw(st.sampled_from(sorted(self.markets)), label="market")
        outcomes = self.markets[market]
        every = data.draw(st.booleans(), label="all outcomes priced")
        quoted = (
            outcomes if every else data.draw(st.lists(st.sampled_from(outcomes), unique=True), label="priced")
        )
        self.prices[market] = {o: data.draw(prices, label=f"{market} {o}") for o in quoted}

    def _draw_leg(self, data: st.DataObject, *, junk: bool) -> Bet | Sell:
        """A plausible leg, or (``junk``) one that breaks a rule, so rejections are exercised too."""
        open_ids = [p.position_id for p in self.ledger.open_positions()]
        market = data.draw(st.sampled_from(sorted(self.markets)), label="market")
        outcome = data.draw(st.sampled_from(self.markets[market]), label="outcome")
        if junk:
            return data.draw(
                st.one_of(
                    st.builds(
                        Bet, st.sampled_from(["polymarket:unknown", market]), st.just("MAYBE"), amounts
                    ),
                    st.builds(Bet, st.just(market), st.just(outcome), bad_amounts),
                    st.builds(Sell, st.sampled_from(["no-such-position", *open_ids]), bad_percents),
                ),
                label="junk leg",
            )
        if open_ids and data.draw(st.booleans(), label="sell?"):
            return Sell(
                data.draw(st.sampled_from(open_ids), label="sold"), data.draw(percents, label="percent")
            )
        return Bet(market, outcome, data.draw(amounts, label="amount"))

    @rule(data=st.data(), with_fee=st.booleans())
    def decide(self, data: st.DataObject, with_fee: bool) -> None:
        size = data.draw(st.integers(0, 3), label="legs")
        junk = data.draw(st.integers(0, 4), label="junk leg index")  # a junk leg in ~1 of 3 decisions
        actions = [self._draw_leg(data, junk=leg == junk) for leg in range(size)]
        quotes = MidQuotes(
            self.prices,
            outcomes=self.markets,
            **({"fee": polymarket_like_fee} if with_fee else {}),
        )
        self._tick()
        self.decisions += 1
        before = self._copy()
        held = {p.position_id: p.shares for p in self.ledger.open_positions()}
        errors = self.ledger.check(actions, quotes)
        try:
            fills = self.ledger.apply_decision(actions, quotes, self.now, decision_id=f"d{self.decisions}")
        except DecisionRejected as rejected:  # a random decision may or may not be rejected
            event("decision rejected")
            assert list(rejected.errors) == errors != []  # noqa: PT017
            assert self.ledger == before
            return
        assert errors == []
        event(f"decision accepted with {len(fills)} legs")
        assert [f.leg_index for f in fills] == list(range(len(actions)))
        for action, fill in zip(actions, fills, strict=True):
            self._check_trade(action, fill, held)
        self.log += fills

    def _check_trade(self, action: Bet | Sell, fill: Fill, held: dict[str, Decimal]) -> None:
        assert fill.price is not None
        if isinstance(action, Bet):
            assert fill.kind is FillKind.BUY
            assert fill.amount == action.amount.quantize(MONEY_QUANTUM, rounding=ROUND_DOWN)
            # cash out == shares × price (+ fee), the shares never worth more than was paid
            assert D(0) <= fill.amount - fill.fee - _times(fill.shares, fill.price) < MONEY_QUANTUM
        else:
            assert fill.kind is FillKind.SELL
            assert 0 < fill.shares <= held[action.position_id]
            assert _within_one_quantum(fill.amount + fill.fee, _times(fill.shares, fill.price))
            if action.percent == 100:
                assert fill.shares == held[action.position_id]

    @rule(data=st.data())
    def mark(self, data: st.DataObject) -> None:
        self._tick()
        shown = data.draw(
            st.lists(st.sampled_from(sorted(self.markets)), unique=True), label="marked markets"
        )
        valuation = self.ledger.mark({m: self.prices[m] for m in shown if m in self.prices}, self.now)
        for value in valuation.positions:
            priced = self.prices.get(value.market_id, {}).get(value.outcome)
            if value.market_id in shown and priced is not None:
                assert (value.price, value.stale) == (priced, False)
            else:
                assert value.stale or (value.marked_at is not None and value.marked_at >= self.now)

    @rule(data=st.data())
    def settle(self, data: st.DataObject) -> None:
        held_markets = sorted({p.market_id for p in self.ledger.open_positions()})
        prefer_held = held_markets and data.draw(st.integers(0, 3), label="settle a held market") > 0
        market = data.draw(
            st.sampled_from(held_markets if prefer_held else sorted(self.markets)), label="settled"
        )
        outcomes = self.markets[market]
        kind = data.draw(st.sampled_from(["winner", "split", "void"]), label="resolution")
        winner = data.draw(st.sampled_from(outcomes), label="winner")
        payouts = {o: D("0.5") if kind == "split" else D(int(o == winner)) for o in outcomes}
        self._tick()
        held = {p.position_id: p for p in self.ledger.open_positions() if p.market_id == market}
        fills = self.ledger.settle(market, payouts, self.now, void=kind == "void")
        assert sorted(f.position_id for f in fills) == sorted(held)
        event(f"{kind} settlement of {len(fills)} positions")
        for fill in fills:
            position = held[fill.position_id]
            assert fill.shares == position.shares
            if kind == "void":
                assert (fill.amount, fill.realized_pnl) == (position.cost_basis, 0)
            else:
                payout = payouts[position.outcome]
                assert _within_one_quantum(fill.amount, _times(position.shares, payout))
        assert self.ledger.settle(market, payouts, self.now) == []  # settling again: no-op
        self.log += fills
        del self.prices[market], self.markets[market]
        self._list_market(outcomes)  # a new market is listed as this one resolves

    @invariant()
    def cash_is_never_negative_and_matches_the_log(self) -> None:
        assert self.ledger.cash >= 0
        assert self.ledger.cash == self.rules.bankroll + sum((f.cash_delta for f in self.log), D(0))

    @invariant()
    def positions_hold_non_negative_shares_and_cost(self) -> None:
        for position in self.ledger.positions.values():
            assert position.shares >= 0 and position.cost_basis >= 0
            assert position.is_open == (position.shares > 0)

    @invariant()
    def pnl_decomposes_exactly(self) -> None:
        valuation = self.ledger.valuation(self.now)
        assert valuation.total_value == valuation.cash + valuation.positions_value
        assert (
            valuation.total_value - self.rules.bankroll == valuation.realized_pnl + valuation.unrealized_pnl
        )

    @invariant()
    def replay_reproduces_the_ledger(self) -> None:
        assert self._copy() == self.ledger


TestLedgerProperties = LedgerMachine.TestCase
TestLedgerProperties.settings = settings(
    max_examples=150,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
