"""Stated forecasts on markets not resolved yet: a provisional reading, never mixed with resolved ones.

A stated score that waits for resolutions changes as markets resolve, so the leaderboard says
how many of an agent's stated events are still open (``provisional_events``) and gives, apart
from the resolved scores, their Brier against the latest market price: per event, the agent's
latest statement ``p`` and the outcome's latest observed price ``m``, ``(p − m)²`` (events
without any observed price are counted but not scored). Mean over events per agent in
``stated_brier_provisional``, each market weighing once (a multi-outcome market's outcomes share
its weight). It measures distance from the market, not accuracy: an agent that
restates the market scores 0 until the markets resolve.
"""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.imputed import EVENT_OF_AGENT
from arena.scoring.rules.scores import brier, per_market_weight
from arena.scoring.rules.sums import fsum


def provisional_events(frames: ScoringFrames) -> pl.DataFrame:
    """Per stated event whose market has no resolution: latest statement ``p``, latest price ``m``, Brier."""
    latest = (
        frames.forecasts.join(frames.resolutions.select("market_id"), on="market_id", how="anti")
        .sort([*EVENT_OF_AGENT, "stated_at"])
        .group_by(EVENT_OF_AGENT, maintain_order=True)
        .agg(pl.col("p").last())
    )
    prices = frames.prices.sort("observed_at").group_by("market_id", "outcome").agg(m=pl.col("price").last())
    return latest.join(prices, on=["market_id", "outcome"], how="left").with_columns(
        brier=brier(pl.col("p"), pl.col("m"))
    )


def provisional_metrics(events: pl.DataFrame) -> pl.DataFrame:
    """Per agent: ``provisional_events`` (open stated events) and ``stated_brier_provisional``."""
    counts = events.group_by("agent", maintain_order=True).agg(provisional_events=pl.len())
    priced = events.filter(pl.col("brier").is_not_null())
    return counts.join(
        market_weighted_mean(priced, "brier", "stated_brier_provisional"), on="agent", how="left"
    )


def market_weighted_mean(rows: pl.DataFrame, column: str, name: str) -> pl.DataFrame:
    """Per agent: the mean of ``column`` over its rows (per cohort, agent and market), each market
    weighing once however many of its outcomes are rows."""
    return (
        rows.with_columns(weight=per_market_weight())
        .group_by("agent", maintain_order=True)
        .agg((fsum(pl.col(column) * pl.col("weight")) / fsum(pl.col("weight"))).alias(name))
    )
