"""A seeded, vectorised generator of realistic scoring frames, for property tests and benchmarks.

Markets have a hidden probability ``q`` and resolve YES with probability ``q`` (a few are voided
or split 50-50); the daily market price wanders around ``q``. Each agent has a noise level: its
belief is ``q`` plus noise, it bets the side its belief favours against the price, with a size
growing with the edge it sees, states its belief as a probability, and holds to resolution.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

import numpy as np
import polars as pl

from arena.scoring.load.frames import MONEY, TIME, ScoringFrames

START = datetime(2025, 1, 1, tzinfo=UTC)
DAY_US = 86_400_000_000
MAX_BET = 2_500.0
BANKROLL = Decimal(10_000)


@dataclass(frozen=True)
class World:
    agents: int = 10
    markets: int = 200
    bets: int = 4_000
    days: int = 120
    cohort: str = "c1"
    seed: int = 7


def synthetic_frames(world: World) -> ScoringFrames:
    rng = np.random.default_rng(world.seed)
    markets = _markets(world, rng)
    prices = _prices(world, markets, rng)
    agents = [f"agent-{i:03d}" for i in range(world.agents)]
    bets = _bets(world, markets, prices, agents, rng)
    resolutions = _resolutions(markets)
    fills = pl.concat([bets.drop("belief"), _settlements(bets, resolutions)])
    return ScoringFrames.of(
        agents=pl.DataFrame(
            {
                "cohort_id": world.cohort,
                "agent": agents,
                "agent_kind": ["baseline" if i == 0 else "llm" for i in range(world.agents)],
                "baseline": [i == 0 for i in range(world.agents)],
                "mock": [False] * world.agents,
                "bankroll": [BANKROLL] * world.agents,
            }
        ),
        fills=fills,
        resolutions=resolutions,
        prices=prices.select("market_id", "outcome", "observed_at", "price"),
        forecasts=bets.select(
            "cohort_id", "agent", "market_id", outcome=pl.lit("YES"), p="belief", stated_at="filled_at"
        ).unique(["cohort_id", "agent", "market_id", "stated_at"]),
        snapshots=_snapshots(world, fills),
        decisions=_decisions(world, agents, rng),
        listings=prices.group_by("market_id").agg(
            cohort_id=pl.lit(world.cohort), listed_at=pl.col("observed_at").min()
        ),
        windows=resolutions.join(
            prices.group_by("market_id").agg(opens_at=pl.col("observed_at").min()), on="market_id"
        ).select(
            "market_id",
            "opens_at",
            cohort_id=pl.lit(world.cohort),
            hidden_until="opens_at",
            closes_at="resolved_at",
        ),
    )


def _markets(world: World, rng: np.random.Generator) -> pl.DataFrame:
    n = world.markets
    q = rng.uniform(0.05, 0.95, n)
    kind = np.where(rng.uniform(size=n) < q, "YES", "NO").astype(object)
    special = rng.uniform(size=n)
    kind[special < 0.02] = "VOID"
    kind[(special >= 0.02) & (special < 0.03)] = "5050"
    return pl.DataFrame(
        {
            "market_id": [f"polymarket:{i}" if i % 3 else f"manifold:{i}" for i in range(n)],
            "venue": ["polymarket" if i % 3 else "manifold" for i in range(n)],
            "category": [
                None if i % 5 == 0 else ("politics", "sports", "crypto", "science")[i % 4] for i in range(n)
            ],
            "q": q,
            "kind": kind.tolist(),
            "life_days": rng.integers(2, world.days, n),
        }
    )


def _prices(world: World, markets: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    life = markets["life_days"].to_numpy()
    market_index = np.repeat(np.arange(len(markets)), life)
    day = np.concatenate([np.arange(k) for k in life])
    q = markets["q"].to_numpy()[market_index]
    price = np.clip(q + rng.normal(0, 0.08, len(day)), 0.02, 0.98).round(4)
    return pl.DataFrame(
        {
            "market_id": markets["market_id"].gather(market_index),
            "market_index": market_index,
            "outcome": "YES",
            "day": day,
            "observed_at": pl.Series((START.timestamp() * 1e6 + day * DAY_US).astype(np.int64)).cast(TIME),
            "price": price,
        }
    )


def _bets(
    world: World, markets: pl.DataFrame, prices: pl.DataFrame, agents: list[str], rng: np.random.Generator
) -> pl.DataFrame:
    """Buys; each agent's sizes are scaled so that it stakes about three bankrolls in all."""
    n = world.bets
    agent = rng.integers(0, len(agents), n)
    noise = 0.02 + 0.3 * agent / max(len(agents) - 1, 1)
    row = prices[rng.integers(0, len(prices), n)]
    market_index = row["market_index"].to_numpy()
    belief = np.clip(markets["q"].to_numpy()[market_index] + rng.normal(0, noise), 0.01, 0.99).round(4)
    yes_price = row["price"].to_numpy()
    buy_yes = belief > yes_price
    side_price = np.where(buy_yes, yes_price, 1 - yes_price)
    confidence = np.clip(0.05 + 2 * np.abs(belief - yes_price), 0.05, 1.0)
    scale = 3 * float(BANKROLL) / np.bincount(agent, weights=confidence * MAX_BET, minlength=len(agents))
    max_bet = np.round(MAX_BET * scale[agent], 2)
    amount = np.clip(np.round(confidence * max_bet, 2), 0.01, max_bet)
    return pl.DataFrame(
        {
            "cohort_id": world.cohort,
            "agent": np.asarray(agents)[agent],
            "market_id": row["market_id"],
            "venue": row["market_id"].str.split(":").list.first(),
            "category": markets["category"].gather(market_index),
            "outcome": np.where(buy_yes, "YES", "NO"),
            "kind": "buy",
            "amount": amount,
            "price": side_price,
            "shares": np.floor(amount / side_price * 1e6) / 1e6,
            "max_bet": max_bet,
            "cash_at_start": 4 * max_bet,
            "realized_pnl": 0.0,
            "filled_at": row["observed_at"] + pl.Series(agent * 1_000_000).cast(pl.Duration("us")),
            "belief": belief,
        },
        schema_overrides={
            "amount": MONEY,
            "shares": MONEY,
            "max_bet": MONEY,
            "cash_at_start": MONEY,
            "realized_pnl": MONEY,
        },
    ).unique(["agent", "market_id", "filled_at"], maintain_order=True)


def _settlements(bets: pl.DataFrame, resolutions: pl.DataFrame) -> pl.DataFrame:
    """One settle fill per held side of a resolved market: $1 a winning share, refunds on a void."""
    held = bets.group_by("cohort_id", "agent", "market_id", "venue", "category", "outcome").agg(
        shares=pl.col("shares").sum(), cost=pl.col("amount").sum()
    )
    held = held.join(resolutions, on="market_id", how="inner")
    per_share = (
        pl.when(pl.col("kind") == "5050")
        .then(pl.lit(Decimal("0.5")))
        .otherwise((pl.col("outcome") == pl.col("winner")).cast(pl.Int64).cast(MONEY))
    )
    payout = pl.when(pl.col("kind") == "VOID").then(pl.col("cost")).otherwise(pl.col("shares") * per_share)
    return held.with_columns(amount=payout.cast(MONEY)).select(
        "cohort_id",
        "agent",
        "market_id",
        "venue",
        "category",
        "outcome",
        kind=pl.lit("settle"),
        amount="amount",
        price=pl.when(pl.col("kind") != "VOID").then(per_share.cast(pl.Float64)),
        shares="shares",
        max_bet=pl.lit(None, dtype=MONEY),
        cash_at_start=pl.lit(None, dtype=MONEY),
        realized_pnl=(pl.col("amount") - pl.col("cost")).cast(MONEY),
        filled_at="resolved_at",
    )


def _resolutions(markets: pl.DataFrame) -> pl.DataFrame:
    return markets.select(
        "market_id",
        "kind",
        winner=pl.when(pl.col("kind").is_in(["YES", "NO"])).then(pl.col("kind")),
        resolved_at=(pl.lit(START) + pl.duration(days=pl.col("life_days"))).cast(TIME),
    )


def _snapshots(world: World, fills: pl.DataFrame) -> pl.DataFrame:
    """Daily marks: bankroll plus realised P/L to date (open positions held at cost)."""
    day = (pl.col("filled_at").dt.timestamp("us") - int(START.timestamp() * 1e6)) // DAY_US + 1
    realized = fills.group_by("cohort_id", "agent", day.alias("day")).agg(pl.col("realized_pnl").sum())
    spent = (
        fills.with_columns(
            flow=pl.when(pl.col("kind") == "buy").then(-pl.col("amount")).otherwise(pl.col("amount"))
        )
        .group_by("cohort_id", "agent", day.alias("day"))
        .agg(pl.col("flow").sum())
    )
    grid = (
        fills.select("cohort_id", "agent")
        .unique()
        .join(pl.DataFrame({"day": np.arange(1, world.days + 2)}), how="cross")
    )
    marks = (
        grid.join(realized, on=["cohort_id", "agent", "day"], how="left")
        .join(spent, on=["cohort_id", "agent", "day"], how="left")
        .sort("cohort_id", "agent", "day")
        .with_columns(
            realized_pnl=pl.col("realized_pnl").fill_null(0).cum_sum().over("cohort_id", "agent"),
            cash=(pl.col("flow").fill_null(0).cum_sum().over("cohort_id", "agent") + BANKROLL).clip(0),
        )
    )
    return marks.select(
        "cohort_id",
        "agent",
        marked_at=(pl.lit(START) + pl.duration(days=pl.col("day"))).cast(TIME),
        cash="cash",
        total_value=(pl.col("realized_pnl") + BANKROLL).cast(MONEY),
        realized_pnl="realized_pnl",
        unrealized_pnl=pl.lit(Decimal(0), dtype=MONEY),
    )


def _decisions(world: World, agents: list[str], rng: np.random.Generator) -> pl.DataFrame:
    days = np.arange(world.days)
    n = len(agents) * len(days)
    return pl.DataFrame(
        {
            "cohort_id": world.cohort,
            "agent": np.repeat(agents, len(days)),
            "decided_at": pl.Series(
                (START.timestamp() * 1e6 + np.tile(days, len(agents)) * DAY_US).astype(np.int64)
            ).cast(TIME),
            "error_kind": ["parse" if u < 0.05 else None for u in rng.uniform(size=n)],
            "tokens": rng.integers(500, 5_000, n),
            "cost": rng.uniform(0, 0.05, n).round(6),
            "latency_s": rng.uniform(1, 30, n),
        },
        schema_overrides={"cost": MONEY},
    )
