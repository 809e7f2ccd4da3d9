"""Stated forecasts scored on everything offered, without selection bias (ForecastBench's rule).

Scoring an agent only on the markets it chose to state rewards stating only easy ones. Here
every agent that *takes part* is scored on every (round, market outcome) its cohort offered it,
for markets that resolved (not void) after the round:

- its forecast for the round is the statement standing then (its latest on that outcome at or
  before the round, as in the as-stated reading a statement stands until the next one);
- with none standing the forecast is *missing* and takes what the agent could see in that round:
  the market price shown (the imputation ForecastBench uses), or, where the round hid the price
  (``offers.shown`` false: the tournament's hidden period, or the cohort's price visibility),
  the ignorance prior 1/n of an n-outcome market (0.5 on a binary one, the Metaculus rules'
  prior), never the hidden price. The row counts as imputed.

An agent takes part in a cohort when it stated at least one probability there (any market, any
round, resolved or not). One that never did has no imputed events, so no stated score at all: a
fully imputed agent would otherwise *be* the market, and abstaining would tie the market.

Per event (cohort, agent, market, outcome) the scores are means over the rounds offered; per
agent, weighted means over events in which each market weighs once (``weight``: 1 / the
market's events, so the n outcomes of a multi-outcome market share one market's weight, as in
the Autocast-normalised Brier). ``imputed_share`` is the share of (round, event) rows that were
imputed: 0 for an agent that stated every market in every round.

Autocast-normalised Brier (the Autocast competition rules): per (round, market), the sum over
the market's outcomes of ``(f_o − y_o)²`` divided by 2, which lies in [0, 1] for any
distribution. A binary market is stored by its YES outcome alone; its NO term
``((1 − f) − (1 − y))²`` equals the YES term, so YES rows count twice and the normalised score
equals the binary Brier.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.scores import YES, brier, log_score, per_market_weight, side_outcome
from arena.scoring.rules.sums import fmean, fsum

EVENT = ["cohort_id", "market_id", "outcome"]
EVENT_OF_AGENT = ["cohort_id", "agent", "market_id", "outcome"]
AUTOCAST_DIVISOR = 2.0  # the largest possible sum of squared errors over a distribution
# A statement within this of the price its round hid states that price; an agent whose statements
# in hidden rounds do so at least HIDDEN_LIMIT of the time, HIDDEN_MIN times or more, saw it.
HIDDEN_MATCH = 0.0005
HIDDEN_LIMIT = 0.5
HIDDEN_MIN = 5


def resolved_offers(frames: ScoringFrames) -> pl.DataFrame:
    """Offers of markets that resolved (not void) after the round, with the outcome's ``y`` and
    ``seen``: what a missing forecast takes in that round (the price if shown, else 1/n)."""
    resolutions = frames.resolutions.rename({"kind": "resolution"})
    round_market = ["cohort_id", "market_id", "offered_at"]
    # A binary market is offered by its YES row alone: two outcomes, one row.
    outcomes = pl.max_horizontal(pl.len().over(round_market), pl.lit(2)).cast(pl.Float64)
    return (
        frames.offers.with_columns(
            seen=pl.when(pl.col("shown")).then(pl.col("price")).otherwise(1.0 / outcomes)
        )
        .join(resolutions, on="market_id", how="inner")
        .with_columns(y=side_outcome())
        .filter(pl.col("y").is_not_null() & (pl.col("offered_at") < pl.col("resolved_at")))
        .select("cohort_id", "market_id", "outcome", "offered_at", "price", "shown", "seen", "y")
    )


def participants(frames: ScoringFrames) -> pl.DataFrame:
    """The seats (``cohort_id``, ``agent``) that stated at least one probability in their cohort."""
    return frames.forecasts.select("cohort_id", "agent").unique().sort("cohort_id", "agent")


def stated_offers(frames: ScoringFrames, offers: pl.DataFrame) -> pl.DataFrame:
    """One row per (agent, round, market outcome) offered on an event the agent stated at some
    point, in no particular order: ``p`` the statement standing at the round (null before its
    first), ``f`` = ``p``, else what the round showed (``seen``), and ``imputed``; ``event`` an
    integer id of the (cohort, agent, market, outcome), in no particular numbering."""
    # Stated events get an integer id, so the as-of join runs on one integer key.
    events = frames.forecasts.select(EVENT_OF_AGENT).unique().with_row_index("event")
    statements = frames.forecasts.join(events, on=EVENT_OF_AGENT).select("event", "p", offered_at="stated_at")
    rows = offers.join(events, on=EVENT, how="inner")
    return (
        rows.sort("event", "offered_at")  # sorted by time within each event: what as-of by event needs
        .join_asof(
            statements.sort("event", "offered_at"),
            on="offered_at",
            by="event",
            strategy="backward",
            check_sortedness=False,  # both sides were just sorted on the key within each event
        )
        .select(
            "event",
            *EVENT_OF_AGENT,
            "offered_at",
            "price",
            "shown",
            "p",
            "y",
            f=pl.coalesce("p", "seen"),
            imputed=pl.col("p").is_null(),
        )
    )


def imputed_event_scores(frames: ScoringFrames) -> pl.DataFrame:
    """Per event of a participating agent: mean Brier and log score over the rounds offered, rows,
    imputed rows, and ``weight`` (1 / the agent's events on that market: each market weighs once).

    An event a participant never stated is what each round showed (price or prior), the same for
    every such agent of the cohort: it is scored once per (cohort, event) and given to each of them.
    """
    offers = resolved_offers(frames)
    stated = _scores(stated_offers(frames, offers), EVENT_OF_AGENT)
    market_events = offers.select(EVENT).unique().with_row_index("event")
    by_market = _scores(
        offers.join(market_events, on=EVENT).with_columns(f="seen", imputed=pl.lit(True)), EVENT
    )
    silent = by_market.join(participants(frames), on="cohort_id", how="inner").join(
        stated, on=EVENT_OF_AGENT, how="anti"
    )
    events = pl.concat([stated, silent.select(stated.columns)]).sort(EVENT_OF_AGENT)
    return events.with_columns(weight=per_market_weight())


def _scores(rows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per event (``keys``; ``event`` an integer id of them): means over its rounds, added up in
    round order, so the same rows give the same bits every run (a parallel ``group_by`` sum would
    not: ``arena.scoring.rules.sums``). Rows sorted by (id, time), each event's run reduced by numpy."""
    f, y = pl.col("f"), pl.col("y")
    ordered = rows.sort("event", "offered_at")
    ids = ordered["event"].to_numpy()
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1]))) if len(ids) else ids
    values = ordered.select(
        brier=brier(f, y),
        log_score=log_score(f, y),
        imputed=pl.col("imputed").cast(pl.Float64),
        shown=pl.col("shown").cast(pl.Float64),
        unstated=(pl.col("imputed") & pl.col("shown")).cast(pl.Float64),
    )
    rounds = np.diff(np.append(starts, len(ids))).astype(np.float64)
    sums = {c: np.add.reduceat(values[c].to_numpy(), starts) if len(ids) else ids for c in values.columns}
    return (
        ordered[starts]
        .select(keys)
        .with_columns(
            brier=pl.Series(sums["brier"] / rounds if len(ids) else [], dtype=pl.Float64),
            log_score=pl.Series(sums["log_score"] / rounds if len(ids) else [], dtype=pl.Float64),
            rounds=pl.Series(rounds, dtype=pl.UInt32),
            imputed=pl.Series(sums["imputed"], dtype=pl.UInt32),
            shown=pl.Series(sums["shown"], dtype=pl.UInt32),
            unstated=pl.Series(sums["unstated"], dtype=pl.UInt32),
        )
        .sort(keys)
    )


def autocast_market_scores(events: pl.DataFrame) -> pl.DataFrame:
    """Per (cohort, agent, market): the mean over rounds of the Autocast-normalised Brier.

    Every outcome of a market is offered in the same rounds (a round offers a market only with a
    price for each outcome), so the mean over rounds of the per-round sum is the sum over the
    market's events of their mean Brier (``imputed_event_scores``), halved.
    """
    halves = pl.when(pl.col("outcome") == YES).then(2.0).otherwise(1.0) * pl.col("brier")
    return events.group_by("cohort_id", "agent", "market_id", maintain_order=True).agg(
        brier=fsum(halves) / AUTOCAST_DIVISOR
    )


def imputed_metrics(events: pl.DataFrame, markets: pl.DataFrame) -> pl.DataFrame:
    """Per agent: ``imputed_share``, ``imputed_events``, ``unstated_share`` (of the rounds that
    showed the price, the share where it had no forecast standing: left out by choice, not for
    want of a price) and ``stated_brier_autocast`` (from ``autocast_market_scores``). The imputed
    Brier and log score themselves are ratios of the metric registry over these events
    (``arena.scoring.metrics.registry``), intervals included."""
    shown = pl.col("shown").sum()
    per_agent = events.group_by("agent", maintain_order=True).agg(
        imputed_events=pl.len(),
        imputed_share=pl.col("imputed").sum() / pl.col("rounds").sum(),
        unstated_share=pl.when(shown > 0).then(pl.col("unstated").sum() / shown),
    )
    autocast = markets.group_by("agent", maintain_order=True).agg(
        stated_brier_autocast=fmean(pl.col("brier"))
    )
    return per_agent.join(autocast, on="agent", how="left")


def hidden_price_metrics(frames: ScoringFrames) -> pl.DataFrame:
    """Per agent that stated in a round which hid the price: ``hidden_price_share``, the share of
    those statements equal to the hidden price (within ``HIDDEN_MATCH``), and ``hidden_price_seen``
    when that share reaches ``HIDDEN_LIMIT`` over at least ``HIDDEN_MIN`` of them: the agent
    stated what the round hid, so the price reached it some other way (a leak), and its
    tournament and stated standings say nothing about forecasting."""
    hidden = frames.offers.filter(~pl.col("shown")).select(*EVENT, "price", stated_at="offered_at")
    stated = frames.forecasts.join(hidden, on=[*EVENT, "stated_at"], how="inner")
    same = ((pl.col("p") - pl.col("price")).abs() <= HIDDEN_MATCH).sum()
    per_agent = stated.group_by("agent", maintain_order=True).agg(statements=pl.len(), same=same)
    share = pl.col("same") / pl.col("statements")
    return per_agent.select(
        "agent",
        hidden_price_share=share,
        hidden_price_seen=(pl.col("same") >= HIDDEN_MIN) & (share >= HIDDEN_LIMIT),
    )
