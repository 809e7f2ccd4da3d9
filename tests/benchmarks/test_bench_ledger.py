"""Throughput of the portfolio engine: fills, marks and replay across many ledgers (recorded, not asserted).

A seeded random workload: 40 agents trade 120 markets whose prices random-walk; decisions mix
bets and sells of 1-3 legs, markets resolve (winner, 50-50 or void) and are replaced, until
100,000 fills have been applied. Then every ledger is marked until 100,000 positions have been
marked. Timings cover only the ledger calls. Correctness is asserted: each ledger rebuilt from
its fills (and stored marks) equals the live one, and the P/L decomposition is exact.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from decimal import ROUND_DOWN, Decimal

import pytest

from portfolio import Bet, Fill, Ledger, MidQuotes, Rules, Sell
from portfolio.actions import Action
from tests.benchmarks.results import Figure, record

FILLS = 100_000
POSITION_MARKS = 100_000
AGENTS = 40
MARKETS = 120
RULES = Rules(bankroll=Decimal(10_000), min_bet=Decimal(1), max_bet_fraction=Decimal("0.25"))
T0 = datetime(2025, 1, 1, tzinfo=UTC)
CENT = Decimal("0.01")


class World:
    """Markets with random-walk prices; a resolved market is replaced by a new one."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.outcomes: dict[str, tuple[str, ...]] = {}
        self.prices: dict[str, dict[str, Decimal]] = {}
        self.listed = 0
        for _ in range(MARKETS):
            self.list_market()

    def list_market(self) -> None:
        self.listed += 1
        market = f"polymarket:{self.listed}"
        outcomes = ("YES", "NO") if self.rng.random() < 0.8 else ("A", "B", "C")
        self.outcomes[market] = outcomes
        self.prices[market] = self.random_prices(outcomes)

    def random_prices(self, outcomes: tuple[str, ...]) -> dict[str, Decimal]:
        if len(outcomes) == 2:
            yes = Decimal(self.rng.randint(20, 980)) / 1000
            return {"YES": yes, "NO": 1 - yes}
        return {o: Decimal(self.rng.randint(10, 600)) / 1000 for o in outcomes}

    def move(self) -> None:
        for market in self.rng.sample(sorted(self.prices), 10):
            self.prices[market] = self.random_prices(self.outcomes[market])

    def quotes(self) -> MidQuotes:
        return MidQuotes(self.prices, outcomes=self.outcomes)

    def resolve(self) -> tuple[str, dict[str, Decimal], bool]:
        market = self.rng.choice(sorted(self.prices))
        outcomes = self.outcomes.pop(market)
        del self.prices[market]
        self.list_market()
        kind = self.rng.random()
        if kind < 0.05:
            return market, {}, True
        if kind < 0.1:
            return market, {o: Decimal("0.5") for o in outcomes}, False
        winner = self.rng.choice(outcomes)
        return market, {o: Decimal(int(o == winner)) for o in outcomes}, False


def decision(rng: random.Random, world: World, ledger: Ledger) -> list[Action]:
    """1-3 legs on distinct outcomes: bets sized within the rules, or sells of open positions."""
    legs: list[Action] = []
    taken: set[tuple[str, str]] = set()
    budget = ledger.cash
    for _ in range(rng.randint(1, 3)):
        open_positions = [p for p in ledger.open_positions() if p.market_id in world.prices]
        if open_positions and rng.random() < 0.35:
            held = rng.choice(open_positions)
            if (held.market_id, held.outcome) not in taken:
                taken.add((held.market_id, held.outcome))
                legs.append(Sell(held.position_id, Decimal(rng.choice([10, 25, 50, 100]))))
            continue
        market = rng.choice(sorted(world.prices))
        outcome = rng.choice(world.outcomes[market])
        amount = (ledger.max_bet() * Decimal(rng.randint(5, 100)) / 100).quantize(CENT, rounding=ROUND_DOWN)
        if (market, outcome) in taken or amount < RULES.min_bet or amount > budget:
            continue
        taken.add((market, outcome))
        budget -= amount
        legs.append(Bet(market, outcome, amount))
    return legs


def run_fills(
    rng: random.Random, world: World, ledgers: list[Ledger]
) -> tuple[dict[str, list[Fill]], float, int]:
    """Trade and settle until FILLS fills exist; returns the logs, seconds spent in the ledger, decisions."""
    logs: dict[str, list[Fill]] = {ledger.agent_id: [] for ledger in ledgers}
    spent, decisions, total, now = 0.0, 0, 0, T0
    while total < FILLS:
        now += timedelta(minutes=1)
        world.move()
        quotes = world.quotes()
        for ledger in rng.sample(ledgers, 10):
            actions = decision(rng, world, ledger)
            tick = time.perf_counter()
            fills = ledger.apply_decision(actions, quotes, now, decision_id=f"{now.isoformat()}")
            spent += time.perf_counter() - tick
            logs[ledger.agent_id] += fills
            total, decisions = total + len(fills), decisions + 1
        if rng.random() < 0.5:
            market, payouts, void = world.resolve()
            tick = time.perf_counter()
            settled = [(lg.agent_id, lg.settle(market, payouts, now, void=void)) for lg in ledgers]
            spent += time.perf_counter() - tick
            for agent_id, fills in settled:
                logs[agent_id] += fills
                total += len(fills)
    return logs, spent, decisions


def run_marks(rng: random.Random, world: World, ledgers: list[Ledger]) -> tuple[int, int, float]:
    """Mark every ledger, round after round, until POSITION_MARKS positions were marked."""
    calls = marked = 0
    spent, now = 0.0, T0 + timedelta(days=365)
    while marked < POSITION_MARKS:
        now += timedelta(minutes=10)
        world.move()
        prices = dict(world.prices)
        for market in rng.sample(sorted(prices), 5):  # some markets without a price: stale marks
            del prices[market]
        for ledger in ledgers:
            tick = time.perf_counter()
            valuation = ledger.mark(prices, now)
            spent += time.perf_counter() - tick
            calls, marked = calls + 1, marked + len(valuation.positions)
    return calls, marked, spent


@pytest.mark.benchmark
def test_ledger_throughput_for_fills_marks_and_replay() -> None:
    rng = random.Random(20250301)
    world = World(rng)
    ledgers = [Ledger(RULES, f"agent-{i}") for i in range(AGENTS)]

    logs, fill_seconds, _ = run_fills(rng, world, ledgers)
    total_fills = sum(len(log) for log in logs.values())
    _, marked, mark_seconds = run_marks(rng, world, ledgers)

    tick = time.perf_counter()
    rebuilt = [
        Ledger.from_fills(
            RULES,
            logs[ledger.agent_id],
            agent_id=ledger.agent_id,
            marks={p.position_id: p.mark for p in ledger.open_positions() if p.mark is not None},
        )
        for ledger in ledgers
    ]
    replay_seconds = time.perf_counter() - tick

    assert total_fills >= FILLS and marked >= POSITION_MARKS
    assert rebuilt == ledgers
    for ledger in ledgers:
        valuation = ledger.valuation(T0 + timedelta(days=400))
        assert ledger.cash >= 0
        assert valuation.total_value - RULES.bankroll == valuation.realized_pnl + valuation.unrealized_pnl
    record(
        "ledger",
        measures=f"the portfolio engine alone: {AGENTS} agents, {FILLS:,} fills, {POSITION_MARKS:,} marks",
        command="pytest tests/benchmarks/test_bench_ledger.py -s -m benchmark",
        figures=[
            Figure("fills applied, validation included", total_fills / fill_seconds, "fills/s"),
            Figure("ledgers rebuilt from their fills", total_fills / replay_seconds, "fills/s"),
            Figure("positions marked", marked / mark_seconds, "marks/s"),
        ],
    )
