"""Profit and loss: headline values from the engine's marks, and P/L attributed to markets.

The headline (value, P/L, realised, unrealised) is the latest portfolio snapshot of each seat:
the portfolio engine's own valuation, never recomputed here. A seat with no snapshot yet is
worth its bankroll if it has no fills (an agent that never bet made exactly 0) and unknown
(null) otherwise.

For statistics the P/L is also split by market (``market_pnl``): what the fill log realised on
the market (sells and settlements, fees included) plus the open shares valued at the latest
observed price of their side (a NO side without its own price is 1 − YES) minus their
remaining cost; with no price yet an open position is worth its cost (DESIGN: never invent a
price). Summed over markets this matches the headline up to the time between the last price
and the last mark.
"""

from __future__ import annotations

import polars as pl

from arena.scoring.frames import BUY, MONEY, SELL, ScoringFrames
from arena.scoring.scores import NO, YES
from arena.scoring.sums import fsum

SEAT = ["cohort_id", "agent"]


def seat_values(frames: ScoringFrames) -> pl.DataFrame:
    """Per seat: bankroll, value, cash, realized, unrealized, pnl (Decimal) as of the latest mark."""
    latest = (
        frames.snapshots.sort("marked_at", maintain_order=True).group_by(SEAT, maintain_order=True).last()
    )
    traded = frames.fills.select(SEAT).unique().with_columns(traded=pl.lit(True))
    never = pl.col("marked_at").is_null() & pl.col("traded").is_null()
    zero = pl.lit(0, dtype=MONEY)
    return (
        frames.agents.join(latest, on=SEAT, how="left", maintain_order="left")
        .join(traded, on=SEAT, how="left", maintain_order="left")
        .select(
            *SEAT,
            "bankroll",
            "marked_at",
            value=pl.when(never).then(pl.col("bankroll")).otherwise(pl.col("total_value")),
            cash=pl.when(never).then(pl.col("bankroll")).otherwise(pl.col("cash")),
            realized=pl.when(never).then(zero).otherwise(pl.col("realized_pnl")),
            unrealized=pl.when(never).then(zero).otherwise(pl.col("unrealized_pnl")),
        )
        .with_columns(pnl=pl.col("value") - pl.col("bankroll"))
    )


def market_pnl(frames: ScoringFrames) -> pl.DataFrame:
    """P/L per (cohort, agent, market) in float dollars: realised plus open value minus open cost.

    Summed fill by fill: each fill adds the P/L it realised and, when its side has a price,
    the value of the shares it moved (+ bought, − sold or settled) minus the cost basis it
    moved, so what is left is exactly (open shares × price − open cost) per priced side.
    """
    now = latest_side_prices(frames.prices).rename({"price": "price_now"})
    priced = frames.fills.join(now, on=["market_id", "outcome"], how="left", maintain_order="left")
    buy = pl.col("kind") == BUY
    shares = pl.col("shares").cast(pl.Float64)
    amount, realized = pl.col("amount").cast(pl.Float64), pl.col("realized_pnl").cast(pl.Float64)
    signed_shares = pl.when(buy).then(shares).otherwise(-shares)
    cost_moved = pl.when(buy).then(amount).otherwise(realized - amount)
    open_part = signed_shares * pl.col("price_now") - cost_moved
    contribution = realized + pl.when(pl.col("price_now").is_null()).then(0.0).otherwise(open_part)
    return priced.group_by([*SEAT, "market_id"], maintain_order=True).agg(pnl=fsum(contribution))


def latest_side_prices(prices: pl.DataFrame) -> pl.DataFrame:
    """Latest observed price per (market, outcome), adding NO = 1 − YES where NO has no price."""
    newest = pl.col("price").get(pl.col("observed_at").arg_max())
    latest = prices.group_by(["market_id", "outcome"], maintain_order=True).agg(newest)
    implied_no = latest.filter(pl.col("outcome") == YES).select(
        "market_id", outcome=pl.lit(NO), price=1.0 - pl.col("price")
    )
    missing_no = implied_no.join(latest, on=["market_id", "outcome"], how="anti")
    schema = {"market_id": pl.String, "outcome": pl.String, "price": pl.Float64}
    return pl.concat([latest, missing_no]).cast(schema)  # typed even when there are no prices


def trading(frames: ScoringFrames) -> pl.DataFrame:
    """Per seat: money traded (buys + sells, not settlements) and the deployed share.

    ``deployed_sum`` adds up, over the seat's daily closes (the snapshots frame holds one mark per
    day), the share of its value held in positions (1 − cash / value); ``marks`` counts them, so
    pooled means stay exact across seats and a cohort marked hourly weighs each day once.
    """
    traded = frames.fills.group_by(SEAT, maintain_order=True).agg(
        traded=pl.col("amount").filter(pl.col("kind").is_in([BUY, SELL])).sum().cast(pl.Float64),
    )
    deployed = frames.snapshots.group_by(SEAT, maintain_order=True).agg(
        deployed_sum=fsum(
            (1.0 - pl.col("cash").cast(pl.Float64) / pl.col("total_value").cast(pl.Float64)).fill_nan(None)
        ),
        marks=pl.len(),
    )
    seats = frames.agents.select(*SEAT, "bankroll")
    return seats.join(traded, on=SEAT, how="left", maintain_order="left").join(
        deployed, on=SEAT, how="left", maintain_order="left"
    )
