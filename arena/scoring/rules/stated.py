"""Scores of stated probabilities, weighted by how long each forecast stood.

Unit of forecast: an *event* (cohort, market, outcome), the binary question "does this outcome
win?". Binary markets have one event (YES); a multi-outcome market has one per outcome stated.

A statement stands from its round until the agent's next statement on the same event, or until
the market resolves. Per agent and event, with ``d_i`` the time statement ``i`` stood:

- ``brier_e = Σ d_i (p_i − y)² / Σ d_i`` and ``log_e`` likewise with the log score;
- ``rel_log_e = Σ d_i [ℓ(p_i, y) − ℓ(m_i, y)] / Σ d_i`` where ``m_i`` is the market price of
  the outcome last observed at or before the statement (what the agent could have seen) and
  ``ℓ`` the log score, i.e. ``ln(p/m)`` for the outcome that happened. Statements without a
  prior price are left out of this one average. Restating the market price scores exactly 0.
- ``coverage_e = Σ d_i / (resolved_at − opened_at)`` where ``opened_at`` is when the market
  was first offered to the cohort (its first round, from ``listings``; every agent could have
  stated from then on), or the first statement on it by any agent of the cohort if that is
  earlier or the market has no listing. Without the listing an agent that alone states a market
  in its last round would cover all of its open time. Events nobody stated would scale every
  agent's coverage by the same factor, so they are not counted.

Per agent: scores are weighted means over the events it stated in which each market weighs
once, however long it ran and however many of its outcomes were stated (``weight``: 1 / the
agent's events on the market). The Metaculus tournament over the same statements (coverage, take,
prize) is ``arena.scoring.rules.tournament``.
"""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.scores import brier, log_score, per_market_weight, side_outcome
from arena.scoring.rules.sums import fsum, run_totals

EVENT = ["cohort_id", "market_id", "outcome"]
AGENT_EVENT = ["cohort_id", "agent", "market_id", "outcome"]


def standing_forecasts(frames: ScoringFrames) -> pl.DataFrame:
    """One row per statement on a resolved, non-void event, with how long it stood (``duration_s``).

    Also ``y``, ``m`` (market price at the statement), ``resolved_at``, ``opened_at`` and
    ``weight``: the statement's share of its agent's standing time on the event, so that a
    weighted mean over statements equals the mean over events of the time-weighted scores.
    """
    resolutions = frames.resolutions.rename({"kind": "resolution"})
    statements = (
        frames.forecasts.join(resolutions, on="market_id", how="inner")
        .with_columns(y=side_outcome())
        .filter(pl.col("y").is_not_null() & (pl.col("stated_at") < pl.col("resolved_at")))
    )
    # Integer event ids in event order, so the big sort is on integers, not four strings; the
    # rows come out exactly as sorted by (event columns, time).
    events = statements.select(AGENT_EVENT).unique().sort(AGENT_EVENT).with_row_index("event")
    statements = (
        _with_market_price(statements, frames.prices).join(events, on=AGENT_EVENT).sort("event", "stated_at")
    )
    # Rows are grouped by event now: a statement stands until the next row of the same event.
    same_event_next = pl.col("event") == pl.col("event").shift(-1)
    ends = pl.when(same_event_next).then(pl.col("stated_at").shift(-1)).otherwise(pl.col("resolved_at"))
    statements = statements.with_columns(
        duration_s=(ends - pl.col("stated_at")).dt.total_seconds().cast(pl.Float64)
    )
    statements = statements.with_columns(
        weight=pl.col("duration_s") / run_totals(statements["duration_s"], statements["event"])
    )
    return statements.join(
        _opened(statements, frames.listings),
        on=["cohort_id", "market_id"],
        how="left",
        maintain_order="left",
    ).drop("event")


def _opened(statements: pl.DataFrame, listings: pl.DataFrame) -> pl.DataFrame:
    """``opened_at`` per (cohort, market): the earlier of its listing and its first statement."""
    first = statements.group_by("cohort_id", "market_id", maintain_order=True).agg(
        stated=pl.col("stated_at").min()
    )
    return first.join(listings, on=["cohort_id", "market_id"], how="left").select(
        "cohort_id", "market_id", opened_at=pl.min_horizontal("stated", "listed_at")
    )


def _with_market_price(statements: pl.DataFrame, prices: pl.DataFrame) -> pl.DataFrame:
    """Add ``m``: the latest price of the event's outcome observed at or before the statement."""
    observed = prices.select("market_id", "outcome", pl.col("observed_at").alias("stated_at"), m="price")
    return statements.sort("stated_at").join_asof(
        observed.sort("stated_at"),
        on="stated_at",
        by=["market_id", "outcome"],
        strategy="backward",
        check_sortedness=False,  # both sides were just sorted on the key
    )


def event_scores(standing: pl.DataFrame) -> pl.DataFrame:
    """Time-weighted scores per (cohort, agent, market, outcome), with coverage of the event and
    ``weight`` (1 / the agent's stated events on that market)."""
    p, y, m, d = pl.col("p"), pl.col("y"), pl.col("m"), pl.col("duration_s")
    priced = pl.when(m.is_not_null()).then(d).otherwise(0.0)
    window = (pl.col("resolved_at").first() - pl.col("opened_at").first()).dt.total_seconds().cast(pl.Float64)
    scores = standing.group_by(AGENT_EVENT, maintain_order=True).agg(
        brier=fsum(d * brier(p, y)) / fsum(d),
        log_score=fsum(d * log_score(p, y)) / fsum(d),
        rel_log_score=pl.when(fsum(priced) > 0).then(
            fsum((priced * (log_score(p, y) - log_score(m, y))).fill_null(0.0)) / fsum(priced)
        ),
        coverage=fsum(d) / window,
    )
    return scores.with_columns(weight=per_market_weight())
