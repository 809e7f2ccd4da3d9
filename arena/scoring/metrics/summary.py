"""Per-agent computations the metric registry points at: money, bets, stated, calibration, risk, cost.

Each takes the leaderboard's ``Inputs`` and returns one row per agent; the registry
(``arena.scoring.metrics.registry``) says which of their columns are metrics. Means of per-bet or
per-event scores are not here: the registry declares them as ratios of sums.

Rows are agents by name over whatever cohorts the frames hold, so one cohort gives that
cohort's table and several give the cross-cohort one. Across cohorts money is *summed*, never
averaged: value, P/L and bankroll add up over an agent's seats, and return % is total P/L over
the total bankroll allocated to the agent (cohorts of different ages are never averaged).
Bets and forecasts pool (a bet is a bet whichever cohort placed it).
"""

from __future__ import annotations

import polars as pl

from agents.external import EXTERNAL_KIND
from arena.scoring.load.frames import READINGS, Reading, ScoringFrames, suffixed
from arena.scoring.metrics.inputs import Inputs
from arena.scoring.rules.calibration import murphy
from arena.scoring.rules.costs import cost_metrics
from arena.scoring.rules.pnl import seat_values, trading
from arena.scoring.rules.provisional import market_weighted_mean
from arena.scoring.rules.risk import risk_metrics
from arena.scoring.rules.sums import fmean, fsum
from portfolio import metrics

MURPHY_PARTS = ("ece", "reliability", "resolution", "uncertainty")
Source = str  # "implied" (fa), "implied_kelly", "stated"
IMPLIED_SOURCES: dict[Source, Reading] = {suffixed("implied", r): r for r in READINGS}
SOURCES: tuple[Source, ...] = (*IMPLIED_SOURCES, "stated")


def roster(frames: ScoringFrames) -> pl.DataFrame:
    """One row per agent name: kind (of its first seat), baseline, external, cohorts and the total
    bankroll of its seats that can bet (null for an external forecaster: it never does)."""
    bets = pl.col("agent_kind") != EXTERNAL_KIND
    return (
        frames.agents.sort("cohort_id", maintain_order=True)
        .group_by("agent", maintain_order=True)
        .agg(
            agent_kind=pl.col("agent_kind").first(),
            baseline=pl.col("baseline").any(),
            mock=pl.col("mock").any(),
            external=bets.not_().all(),
            cohorts=pl.col("cohort_id").n_unique(),
            bankroll=pl.when(bets.any()).then(pl.col("bankroll").filter(bets).sum()),
        )
        .sort("agent")
    )


def _all_or_null(column: str) -> pl.Expr:
    """Sum over seats, or null when any seat's figure is unknown (traded but never marked)."""
    return pl.when(pl.col(column).null_count() == 0).then(pl.col(column).sum())


def money(inputs: Inputs) -> pl.DataFrame:
    """Per agent: value, cash, P/L (realised, unrealised), last mark and return %, summed over seats."""
    betting = inputs.frames.agents.filter(pl.col("agent_kind") != EXTERNAL_KIND).select("cohort_id", "agent")
    seats = seat_values(inputs.frames).join(
        betting, on=["cohort_id", "agent"], how="semi", maintain_order="left"
    )
    totals = seats.group_by("agent", maintain_order=True).agg(
        value=_all_or_null("value"),
        cash=_all_or_null("cash"),
        pnl=_all_or_null("pnl"),
        realized_pnl=_all_or_null("realized"),
        unrealized_pnl=_all_or_null("unrealized"),
        marked_at=pl.col("marked_at").max(),
        bankroll=pl.col("bankroll").sum(),
    )
    value, bankroll = pl.col("value").cast(pl.Float64), pl.col("bankroll").cast(pl.Float64)
    return totals.with_columns(return_pct=metrics.return_pct(value, bankroll)).drop("bankroll")


def bet_activity(inputs: Inputs) -> pl.DataFrame:
    """Per agent: bets, staked, resolved_bets (y known) and resolved_markets they cover."""
    scored = pl.col("scored")
    return inputs.bets.group_by("agent", maintain_order=True).agg(
        bets=pl.len(),
        staked=pl.col("amount").sum(),
        resolved_bets=scored.sum(),
        resolved_markets=pl.col("market_id").filter(scored).n_unique(),
    )


def cohort_mean_briers(inputs: Inputs) -> pl.DataFrame:
    """Per agent and reading: the mean over its cohorts of its Brier there (Forecaster Arena's comparison).

    Each cohort weighs the same, however many bets it holds; cohorts without a resolved bet of
    the agent are left out.
    """
    briers = [suffixed("brier", r) for r in READINGS]
    scored = inputs.bets.filter(pl.col("scored"))
    per_seat = scored.group_by("cohort_id", "agent", maintain_order=True).agg(
        fmean(pl.col(b)).alias(b) for b in briers
    )
    return (
        per_seat.sort("cohort_id", maintain_order=True)
        .group_by("agent", maintain_order=True)
        .agg(
            fmean(pl.col(b)).alias(suffixed("brier_cohorts_mean", r))
            for b, r in zip(briers, READINGS, strict=True)
        )
    )


def stated_metrics(inputs: Inputs) -> pl.DataFrame:
    """Per agent: stated events scored and the mean relative log score (the tournament is
    ``arena.scoring.rules.tournament``)."""
    means = inputs.events.group_by("agent", maintain_order=True).agg(
        stated_events=pl.len(), rel_log_score=fmean(pl.col("rel_log_score"))
    )
    table = roster(inputs.frames).select("agent").join(means, on="agent", how="left", maintain_order="left")
    return table.with_columns(pl.col("stated_events").fill_null(0))


def stated_overall(inputs: Inputs) -> pl.DataFrame:
    """Per agent: ``stated_brier_overall``, the mean over its resolved stated events (their Brier)
    and its open ones (their Brier against the latest price) together, each market weighing once:
    ForecastBench's score of a forecaster on market questions, as provisional as its open part."""
    keys = ["cohort_id", "agent", "market_id", "brier"]
    resolved = inputs.events.select(keys)
    still_open = inputs.readings.provisional.filter(pl.col("brier").is_not_null()).select(keys)
    return market_weighted_mean(pl.concat([resolved, still_open]), "brier", "stated_brier_overall")


def calibration_metrics(inputs: Inputs) -> pl.DataFrame:
    """Per agent: ECE and Murphy parts of each source (``SOURCES``), prefixed by the source."""
    table = roster(inputs.frames).select("agent")
    for source in SOURCES:
        parts = murphy(source_pairs(inputs.bets, inputs.standing, source), ["agent"]).select(
            "agent", *MURPHY_PARTS
        )
        parts = parts.rename({part: calibration_key(source, part) for part in MURPHY_PARTS})
        table = table.join(parts, on="agent", how="left", maintain_order="left")
    return table


def calibration_key(source: Source, part: str) -> str:
    """``implied_ece``, ``implied_ece_kelly``, ``stated_ece``, ...: the source's reading comes last."""
    kind, _, reading = source.partition("_")
    return f"{kind}_{part}" + (f"_{reading}" if reading else "")


def source_pairs(bets: pl.DataFrame, standing: pl.DataFrame, source: Source) -> pl.DataFrame:
    """Forecast/outcome/weight pairs of one source: bets in a reading (``implied``, ``implied_kelly``)
    or the standing statements (``stated``)."""
    if source == "stated":
        return stated_pairs(standing)
    reading = IMPLIED_SOURCES.get(source)
    if reading is None:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    return implied_pairs(bets, reading)


def implied_pairs(bets: pl.DataFrame, reading: Reading) -> pl.DataFrame:
    """Forecast/outcome pairs of resolved bets, YES-oriented for binary bets, weight 1 each."""
    return bets.filter(pl.col("scored")).select(
        "cohort_id",
        "agent",
        "market_id",
        forecast=suffixed("forecast_yes", reading),
        outcome="outcome_yes",
        weight=pl.lit(1.0),
    )


def stated_pairs(standing: pl.DataFrame) -> pl.DataFrame:
    """Forecast/outcome pairs of standing statements, weighted by their share of the event's time."""
    return standing.select("cohort_id", "agent", "market_id", forecast="p", outcome="y", weight="weight")


def portfolio_metrics(inputs: Inputs) -> pl.DataFrame:
    """Per agent: risk (daily returns), turnover, deployed share and cost of deciding.

    ``turnover`` = money traded (buys + sells) / bankroll allocated: 2.0 means the agent traded
    twice its capital. ``deployed_share`` = mean over daily closes of the share of value in positions.
    """
    frames = inputs.frames
    activity = (
        trading(frames)
        .sort("cohort_id", maintain_order=True)
        .group_by("agent", maintain_order=True)
        .agg(
            traded=fsum(pl.col("traded")),
            bankroll=pl.col("bankroll").sum().cast(pl.Float64),
            deployed_sum=fsum(pl.col("deployed_sum")),
            marks=pl.col("marks").sum(),
        )
    )
    activity = activity.select(
        "agent",
        turnover=pl.col("traded").fill_null(0.0) / pl.col("bankroll"),
        deployed_share=pl.when(pl.col("marks") > 0).then(pl.col("deployed_sum") / pl.col("marks")),
    )
    return activity.join(risk_metrics(frames), on="agent", how="left", maintain_order="left").join(
        cost_metrics(frames), on="agent", how="left"
    )
