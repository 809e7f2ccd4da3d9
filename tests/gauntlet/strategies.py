"""The gauntlet's strategies: plug-in bettors (``kind = "plugin"``) run through the real replay.

One positive control, which forecasts and bets well because it is told the answers (with noise),
and negative controls, each built to exploit one metric rather than to forecast or bet well. A
board that crowns skill ranks the positive control first and none of the negative controls on the
metric it games (``tests/gauntlet/test_gauntlet.py`` checks every default view).

The controls that need knowledge no real bettor has (outcomes, hidden or later prices) read the
replay dataset directly, as a forecaster with an outside source would: that is the point.
Everything is deterministic: randomness comes from ``random.Random`` seeded per market.
"""

from __future__ import annotations

import functools
import random
from decimal import Decimal

from agents.baselines.passive import HoldBettor, MarketBettor
from agents.sizing import BetBudget, KellySizing, binary_quotes, held_market_ids, kelly_bets, outcome_price
from agents.types import AgentView, Decision
from markets.replay import BUNDLED_DATASET_DIR, ReplayDataset, ReplaySource, load_dataset
from markets.types import NO, YES, ResolutionKind
from portfolio.actions import Bet, Sell
from portfolio.units import MarketId

HALF = Decimal("0.5")


@functools.cache
def _dataset(path: str) -> ReplayDataset:
    return load_dataset(path)


@functools.cache
def _source(path: str) -> ReplaySource:
    return ReplaySource(_dataset(path), max_price_age=None)


def _yes_won(dataset: ReplayDataset, market_id: str) -> bool | None:
    """Whether YES won (None: the market did not resolve YES or NO)."""
    resolution = dataset.resolutions.get(market_id)
    if resolution is None or resolution.kind not in (ResolutionKind.YES, ResolutionKind.NO):
        return None
    return resolution.kind is ResolutionKind.YES


class Informed:
    """Positive control: knows how each market ends, with noise, states its belief and bets on it.

    Per market (seeded by market id), it believes the outcome that happened, except on a
    ``wrong_share`` of markets where it believes the other one, and moves the market price (the
    recorded one where the round hides it) a
    share α ∈ [0.2, 0.6] of the way towards what it believes: q = p + α·(target − p). It states q
    on every offered binary market every round and bets ``kelly_fraction`` of full Kelly on q
    where its edge exceeds 5 points (the ``kelly`` baseline's sizing, on better beliefs).
    """

    uses_peers = False

    def __init__(self, name: str, dataset: str = str(BUNDLED_DATASET_DIR), wrong_share: float = 0.1) -> None:
        self.name = name
        self.dataset = dataset
        self.wrong_share = wrong_share
        self.sizing = KellySizing(
            kelly_fraction=Decimal("0.25"), edge_threshold=Decimal("0.05"), max_markets=5
        )

    def belief(self, market_id: str, price: Decimal) -> Decimal | None:
        yes_won = _yes_won(_dataset(self.dataset), market_id)
        if yes_won is None:
            return None
        rng = random.Random(f"informed:{market_id}")
        believes_yes = yes_won != (rng.random() < self.wrong_share)
        alpha = Decimal(str(round(rng.uniform(0.2, 0.6), 4)))
        target = Decimal(1) if believes_yes else Decimal(0)
        return min(Decimal("0.99"), max(Decimal("0.01"), price + alpha * (target - price)))

    async def decide(self, view: AgentView) -> Decision:
        beliefs = {
            e.market.market_id: q
            for e, price in binary_quotes(view.snapshot)
            if (q := self.belief(e.market.market_id, price)) is not None
        }
        bets, notes = kelly_bets(view, beliefs, self.sizing)
        # Where the round hides a price (the tournament's hidden period) it still forecasts, from
        # the recorded price it knows as it knows the outcome; it cannot bet there.
        hidden = [
            e.market.market_id
            for e in view.snapshot.entries
            if e.market.is_binary and YES not in e.price.prices
        ]
        recorded = _source(self.dataset).latest_prices(hidden, view.now)
        unpriced = {
            m: q
            for m in hidden
            if m in recorded
            and (price := recorded[m].prices.get(YES)) is not None
            and (q := self.belief(m, price)) is not None
        }
        probabilities = {m: {YES: float(q)} for m, q in {**unpriced, **beliefs}.items()}
        return Decision(actions=bets, probabilities=probabilities, reasoning="; ".join(notes) or "informed")


class Copier(MarketBettor):
    """Copies the market: states the shown price everywhere, never bets (the ``market`` baseline's
    rule under a name that is not a baseline). Games the tournament and the stated scores."""


class Silent(HoldBettor):
    """Never states, never bets (the ``hold`` baseline's rule, not marked a baseline). Games the
    imputed stated scores, which fill every missing forecast with the market price."""


class SureThing:
    """States the market price only on near-certain markets (a side priced ``threshold`` or more),
    nothing elsewhere; never bets. Games the as-stated scores, which average what was stated."""

    uses_peers = False

    def __init__(self, name: str, threshold: float = 0.9) -> None:
        self.name = name
        self.threshold = Decimal(str(threshold))

    async def decide(self, view: AgentView) -> Decision:
        chosen = {
            e.market.market_id: {YES: float(p)}
            for e, p in binary_quotes(view.snapshot)
            if max(p, 1 - p) >= self.threshold
        }
        return Decision(probabilities=chosen, reasoning="sure thing: states near-certain markets only")


class CherryPicker:
    """States once, in the first round that shows a price: 0.99 on the favourite of the most lopsided offered
    market, and never again; never bets. Games the as-stated means (one lucky question)."""

    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.stated = False

    async def decide(self, view: AgentView) -> Decision:
        quotes = binary_quotes(view.snapshot)
        if self.stated or not quotes:
            return Decision(reasoning="cherry picker: stated once, or nothing priced yet")
        self.stated = True
        entry, price = max(quotes, key=lambda q: (abs(q[1] - HALF), q[0].market.market_id))
        stated = 0.99 if price > HALF else 0.01
        return Decision(probabilities={entry.market.market_id: {YES: stated}}, reasoning="one sure call")


class LongshotDust:
    """The minimum bet on the cheap side (priced below ``below``) of one market a round, sold the
    next round; states nothing. Games the bet-size Brier (Forecaster Arena's): a minimum bet
    reads as P(side) = min bet / max bet, near 0, longshots mostly lose, and a bet later sold still
    counts, so it scores near 0 ("Excellent") on many markets, while selling within a week keeps
    its losses to the prices' drift (its return reads Neutral). It takes the longshots in turn
    (the round's index picks one), so its bets spread over many markets."""

    uses_peers = False

    def __init__(self, name: str, below: float = 0.15) -> None:
        self.name = name
        self.below = Decimal(str(below))

    async def decide(self, view: AgentView) -> Decision:
        held = held_market_ids(view.portfolio)
        sells = [Sell(p.position_id, Decimal(100)) for p in view.portfolio.positions if p.market_open]
        longshots = [
            (entry.market.market_id, side)
            for entry, yes in binary_quotes(view.snapshot)
            if entry.market.market_id not in held
            and (price := outcome_price(entry, side := YES if yes < HALF else NO)) is not None
            and price < self.below
        ]
        amount = BetBudget.from_view(view).take(view.rules.min_bet)
        if not longshots or amount is None:
            return Decision(actions=tuple(sells), reasoning="longshot dust: nothing to buy")
        market_id, side = longshots[view.round_index % len(longshots)]
        return Decision(actions=(*sells, Bet(MarketId(market_id), side, amount)), reasoning="longshot dust")


class HiddenCopier:
    """Restates the reference the tournament scores against: the recorded market price, read
    from the dataset where the round hides it (the tournament's hidden period), else the shown
    price; never bets. Games the tournament: x = ln(f/m) = 0 with full coverage."""

    uses_peers = False

    def __init__(self, name: str, dataset: str = str(BUNDLED_DATASET_DIR)) -> None:
        self.name = name
        self.dataset = dataset

    async def decide(self, view: AgentView) -> Decision:
        binary = [e for e in view.snapshot.entries if e.market.is_binary]
        hidden = [e.market.market_id for e in binary if YES not in e.price.prices]
        recorded = _source(self.dataset).latest_prices(hidden, view.now)
        probabilities: dict[str, dict[str, float]] = {}
        for entry in binary:
            market_id = entry.market.market_id
            price = (
                recorded[market_id].prices.get(YES) if market_id in recorded else entry.price.prices.get(YES)
            )
            if price is not None and 0 < price < 1:
                probabilities[market_id] = {YES: float(price)}
        return Decision(probabilities=probabilities, reasoning="restates the reference")


class ClosedTrader:
    """Trades markets the venue has closed, with hindsight: buys the side that won on markets past
    their close and not yet resolved, sells what it holds in them, and otherwise buys the favourite
    of the two soonest-closing offered markets. Games everything: every closed-market leg must be
    refused, so it earns nothing from them."""

    uses_peers = False

    def __init__(self, name: str, dataset: str = str(BUNDLED_DATASET_DIR)) -> None:
        self.name = name
        self.dataset = dataset

    def closed_now(self, view: AgentView) -> list[str]:
        data = _dataset(self.dataset)
        return [
            m
            for m, market in data.markets.items()
            if market.is_closed(view.now)
            and data.series[m].first_time <= view.now
            and (resolved := data.resolutions.get(m)) is not None
            and view.now < resolved.resolved_at
        ]

    async def decide(self, view: AgentView) -> Decision:
        data = _dataset(self.dataset)
        closed = self.closed_now(view)
        legs: list[Bet | Sell] = [
            Sell(p.position_id, Decimal(100)) for p in view.portfolio.positions if p.market_id in closed
        ]
        for market_id in closed[:3]:
            won = _yes_won(data, market_id)
            if won is not None:
                legs.append(Bet(MarketId(market_id), YES if won else NO, Decimal(500)))
        if not legs:
            soonest = sorted(
                binary_quotes(view.snapshot),
                key=lambda q: (q[0].market.close_time is None, q[0].market.close_time, q[0].market.market_id),
            )
            held = held_market_ids(view.portfolio)
            legs = [
                Bet(MarketId(e.market.market_id), YES if p > HALF else NO, Decimal(200))
                for e, p in soonest
                if e.market.market_id not in held and p != HALF
            ][:2]
        return Decision(actions=tuple(legs), reasoning=f"closed markets: {len(closed)}")


class FavouriteDust:
    """The minimum bet on the heavy favourite (priced ``above`` or more) of up to ``max_markets``
    markets a round; states nothing. Games the Kelly-reading Brier: a small stake reads as
    P(side) ≈ the price, so on near-certain markets its Brier is the market's own, tiny
    ("Excellent"), with no skill over the market at all. It also tops the win rate and the
    Sharpe ratio, honestly: heavy favourites at the recorded prices do win, steadily."""

    uses_peers = False

    def __init__(self, name: str, above: float = 0.9, max_markets: int = 5) -> None:
        self.name = name
        self.above = Decimal(str(above))
        self.max_markets = max_markets

    async def decide(self, view: AgentView) -> Decision:
        held, budget, bets = held_market_ids(view.portfolio), BetBudget.from_view(view), []
        for entry, yes in binary_quotes(view.snapshot):
            side = YES if yes > HALF else NO
            price = outcome_price(entry, side)
            if entry.market.market_id in held or price is None or price < self.above:
                continue
            amount = budget.take(view.rules.min_bet)
            if amount is None or len(bets) == self.max_markets:
                break
            bets.append(Bet(MarketId(entry.market.market_id), side, amount))
        return Decision(actions=tuple(bets), reasoning="favourite dust")


def plugin(name: str, cls: type, **settings: object) -> dict[str, object]:
    """The ``[[agents]]`` entry seating ``cls`` of this module as ``name``."""
    entry: dict[str, object] = {"name": name, "kind": "plugin", "path": f"{__name__}:{cls.__name__}"}
    return entry | ({"settings": settings} if settings else {})
