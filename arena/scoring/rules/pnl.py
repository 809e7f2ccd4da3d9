"""Profit and loss: headline values from the engine's marks, and P/L attributed to markets.

The headline (value, P/L, realised, unrealised) is the latest portfolio snapshot of each seat:
the portfolio engine's own valuation, never recomputed here. A seat with no snapshot yet is
worth its bankroll if it has no fills (an agent that never bet made exactly 0) and unknown
(null) otherwise.

For statistics the P/L is also split by market (``market_pnl``), exactly: what the fill log
realised on the market (sells and settlements, fees included) plus the open shares valued at the
latest observed price of their side (a NO side without its own price is 1 − YES), as the ledger
values them, minus their remaining cost; with no price yet an open position is worth its cost
(DESIGN: never invent a price). Summed over markets this is the headline P/L to the micro-dollar
when the last mark used the latest prices, and otherwise differs only by the moves in between.
"""

from __future__ import annotations

from decimal import Decimal

import polars as pl

from arena.scoring.load.frames import BUY, MONEY, SELL, ScoringFrames
from arena.scoring.rules.scores import NO, YES
from arena.scoring.rules.sums import fsum
from portfolio import metrics

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
        .with_columns(pnl=metrics.pnl(pl.col("value"), pl.col("bankroll")))
    )


def market_pnl(frames: ScoringFrames) -> pl.DataFrame:
    """P/L per (cohort, agent, market), exact (``Decimal``): realised plus open value minus open cost.

    Per side held: the P/L its fills realised, plus the open shares valued as the ledger values
    them (``portfolio.metrics.position_value``: shares × the side's latest price, truncated to the
    micro-dollar) minus the cost basis still open. A side without a price is worth its cost. With
    the mark's prices this is exactly the ledger's P/L of the market, to the micro-dollar.
    """
    buy = pl.col("kind") == BUY
    sides = frames.fills.group_by([*SEAT, "market_id", "outcome"], maintain_order=True).agg(
        realized=pl.col("realized_pnl").sum(),
        shares=pl.when(buy).then(pl.col("shares")).otherwise(-pl.col("shares")).sum(),
        # A buy adds its amount to the cost basis; a sell or settlement removes amount − realised.
        cost=pl.when(buy).then(pl.col("amount")).otherwise(pl.col("realized_pnl") - pl.col("amount")).sum(),
    )
    now = latest_side_prices(frames.prices).rename({"price": "price_now"})
    sides = sides.join(now, on=["market_id", "outcome"], how="left", maintain_order="left")
    # Only open, priced sides need valuing (closed ones are worth 0, unpriced ones their cost).
    priced = (pl.col("shares") != 0) & pl.col("price_now").is_not_null()
    sides = sides.with_row_index("_row")
    open_sides = sides.filter(priced).select("_row", "shares", "price_now")
    values = [metrics.position_value(shares, _exact(price)) for _, shares, price in open_sides.iter_rows()]
    valued = open_sides.select("_row", value=pl.Series(values, dtype=MONEY))
    sides = sides.join(valued, on="_row", how="left", maintain_order="left").with_columns(
        value=pl.when(pl.col("price_now").is_null())
        .then(pl.col("cost"))
        .otherwise(pl.col("value").fill_null(0))
    )
    return sides.group_by([*SEAT, "market_id"], maintain_order=True).agg(
        pnl=(pl.col("realized") + pl.col("value") - pl.col("cost")).sum().cast(MONEY)
    )


def _exact(price: float) -> Decimal:
    """The stored decimal price back from its float (prices are read as floats for statistics)."""
    return Decimal(repr(price))


def latest_side_prices(prices: pl.DataFrame) -> pl.DataFrame:
    """Latest observed price per (market, outcome), adding NO = 1 − YES where NO has no price."""
    newest = pl.col("price").get(pl.col("observed_at").arg_max())
    latest = prices.group_by(["market_id", "outcome"], maintain_order=True).agg(newest)
    implied_no = latest.filter(pl.col("outcome") == YES).select(
        "market_id", outcome=pl.lit(NO), price=1.0 - pl.col("price")
    )
    missing_no = implied_no.join(latest, on=["market_id", "outcome"], how="anti")
    schema = pl.Schema({"market_id": pl.String, "outcome": pl.String, "price": pl.Float64})
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
