"""Metaculus tournament scoring, exactly as seed 000 describes it (README "Tournament").

A *question* is a market offered to a cohort that resolved (not void), with a window of positive
length in ``frames.windows``: from the cohort's first round that offered it to the market's close
or the cohort's end, whichever is first. The window's first part, up to ``hidden_until``, is the
hidden period, during which agents were not shown the market's price.

Per agent and question, ``x(t) = ℓ(f(t)) − ℓ(m(t))`` while the agent has a forecast standing and
the question has not resolved yet, else 0: silent time and time after an early resolution score
0 but stay in the window (averaging over the standing time only would make the score improper).
``f`` is the agent's standing probability, ``m`` the reference (the market's last price, or the
median of the standing forecasts of the cohort's non-baseline agents); ``ℓ`` is the log score of
``arena.scoring.scores``, so ``x = ln(f/m)`` for the outcome that happened (a 50-50 resolution
scores half of each side; both are clipped at 0.1%, as Metaculus does). Then

- ``s_q = s_weight · mean_hidden(x) + (1 − s_weight) · mean_visible(x)``, each mean over the whole
  period (with ``s_weight = hidden_fraction`` every moment of the window weighs the same);
- ``c_q`` likewise with ``c_weight`` and 1 while a forecast stands (0 after resolution);
- per agent ``s = Σ_q s_q`` (a sum: every question adds to the lead), ``c`` = mean of ``c_q`` over
  ALL the questions of its cohorts, ``S = c · exp(s)``, take ``S / ΣS``, prize ``take × pool``.

Forecasts are those of ``arena.scoring.frames.FORECASTS``: a statement stands until the agent's
next one on the same outcome. Binary markets are scored on YES (``y`` 1, 0 or ½), a multi-outcome
market on the outcome that won. Time without a reference price (none observed yet, or no
non-baseline forecast to take the median of) scores 0 but counts as coverage. Across cohorts the
questions pool into one tournament whose pool is the sum of the cohorts' pools.
"""

from __future__ import annotations

import polars as pl

from arena.cohorts.config import TournamentConfig
from arena.scoring.frames import ScoringFrames
from arena.scoring.scores import log_score, side_outcome

QUESTION = ["cohort_id", "market_id"]
AGENT_QUESTION = ["cohort_id", "agent", "market_id"]
COLUMNS = ("tournament_score", "coverage", "tournament_take", "tournament_prize")
_DEFAULTS = TournamentConfig()


def tournament_standings(frames: ScoringFrames) -> pl.DataFrame:
    """One row per agent name: ``tournament_score`` (s), ``coverage`` (c), ``tournament_take``
    (S / ΣS) and ``tournament_prize``; all null for an agent whose cohorts have no question yet."""
    settings = _settings(frames)
    questions = _questions(frames, settings)
    per_seat = (
        question_scores(frames, questions)
        .group_by("cohort_id", "agent")
        .agg(s=pl.sum("s_q"), c=pl.sum("c_q"))
    )
    per_agent = (
        frames.agents.select("cohort_id", "agent")
        .join(questions.group_by("cohort_id").agg(questions=pl.len()), on="cohort_id", how="left")
        .join(per_seat, on=["cohort_id", "agent"], how="left")
        .group_by("agent")
        .agg(pl.sum("questions", "s", "c"))
    )
    scored = pl.col("questions") > 0
    return split_prizes(
        per_agent.select(
            "agent",
            tournament_score=pl.when(scored).then(pl.col("s")),
            coverage=pl.when(scored).then(pl.col("c") / pl.col("questions")),
        ).sort("agent"),
        float(settings["prize_pool"].sum()),
    )


def split_prizes(standings: pl.DataFrame, pool: float) -> pl.DataFrame:
    """Add ``tournament_take`` = S / ΣS with S = c · exp(s), and ``tournament_prize`` = take × pool
    (null when nobody has any S to split)."""
    big_s = pl.col("coverage") * pl.col("tournament_score").exp()
    total = standings.select(big_s.sum()).item() or 0.0
    take = big_s / total if total > 0 else pl.lit(None, pl.Float64)
    return standings.with_columns(tournament_take=take).with_columns(
        tournament_prize=pl.col("tournament_take") * pool
    )


def prize_pool(frames: ScoringFrames) -> float:
    """The dollars split by take: the sum of the pools of the cohorts ``frames`` holds."""
    return float(_settings(frames)["prize_pool"].sum())


def question_scores(frames: ScoringFrames, questions: pl.DataFrame) -> pl.DataFrame:
    """Per (cohort, agent, market) of every question: ``s_q`` and ``c_q`` (see the module docstring).

    Time is cut into segments at every instant something can change (window start, end of the
    hidden period, resolution, statements, prices); on a segment every agent's forecast and the
    reference are constant, so each integral is a sum over segments.
    """
    segments = _segments(frames, questions)
    seats = frames.agents.select("cohort_id", "agent", "baseline")
    rows = segments.join(seats, on="cohort_id", how="inner").sort("t")
    standing = frames.forecasts.select("cohort_id", "agent", "market_id", "outcome", "p", t="stated_at")
    rows = rows.join_asof(
        standing.sort("t"),
        on="t",
        by=["cohort_id", "agent", "market_id", "outcome"],
        strategy="backward",
        check_sortedness=False,  # both sides were just sorted on the key
    )
    rows = _with_reference(rows, frames.prices)
    relative = log_score(pl.col("p"), pl.col("y")) - log_score(pl.col("m"), pl.col("y"))
    stands = pl.col("p").is_not_null()
    x = pl.when(stands & pl.col("m").is_not_null()).then(relative).otherwise(0.0)
    return (
        rows.group_by(AGENT_QUESTION)
        .agg(s_q=(pl.col("w_s") * x).sum(), c_q=(pl.col("w_c") * stands.cast(pl.Float64)).sum())
        .sort(AGENT_QUESTION)
    )


def _settings(frames: ScoringFrames) -> pl.DataFrame:
    """Each cohort's settings: its ``tournaments`` row, or the defaults."""
    cohorts = frames.agents.select("cohort_id").unique()
    defaults = {k: getattr(_DEFAULTS, k) for k in ("prize_pool", "reference", "s_weight", "c_weight")}
    return cohorts.join(frames.tournaments, on="cohort_id", how="left").with_columns(
        pl.col(k).fill_null(v) for k, v in defaults.items()
    )


def _questions(frames: ScoringFrames, settings: pl.DataFrame) -> pl.DataFrame:
    """Every scorable question: its window, the outcome scored with its ``y``, and its settings."""
    resolved = frames.resolutions.filter(pl.col("kind") != "VOID").select(
        "market_id",
        "resolved_at",
        outcome=pl.when(pl.col("kind") == "OUTCOME").then(pl.col("winner")).otherwise(pl.lit("YES")),
        resolution="kind",
        winner="winner",
    )
    return (
        frames.windows.filter(pl.col("closes_at") > pl.col("opens_at"))
        .join(resolved, on="market_id", how="inner")
        .join(settings, on="cohort_id", how="inner")
        .with_columns(
            y=side_outcome(),
            scored_until=pl.max_horizontal("opens_at", pl.min_horizontal("closes_at", "resolved_at")),
            hidden_s=_seconds("opens_at", "hidden_until"),
            visible_s=_seconds("hidden_until", "closes_at"),
        )
        .with_columns(_on_periods_that_exist(w) for w in ("s_weight", "c_weight"))
        .drop("resolution", "winner", "resolved_at")
    )


def _on_periods_that_exist(weight: str) -> pl.Expr:
    """A period of no length carries no weight (a window too short to hide anything)."""
    return (
        pl.when(pl.col("hidden_s") == 0)
        .then(0.0)
        .when(pl.col("visible_s") == 0)
        .then(1.0)
        .otherwise(pl.col(weight))
        .alias(weight)
    )


def _seconds(start: str, end: str) -> pl.Expr:
    return (pl.col(end) - pl.col(start)).dt.total_seconds(fractional=True)


def _segments(frames: ScoringFrames, questions: pl.DataFrame) -> pl.DataFrame:
    """Per question, the pieces ``[t, next)`` of its scored time with their weights ``w_s``, ``w_c``."""
    key = [*QUESTION, "outcome"]
    bounds = questions.select(
        *QUESTION, t=pl.concat_list("opens_at", "hidden_until", "scored_until")
    ).explode("t")
    stated = frames.forecasts.select("cohort_id", "market_id", "outcome", t="stated_at").join(
        questions.select(key), on=key, how="semi"
    )
    observed = frames.prices.select("market_id", "outcome", t="observed_at").join(
        questions.select(key), on=["market_id", "outcome"], how="inner"
    )
    cuts = pl.concat([bounds, stated.drop("outcome"), observed.select(*QUESTION, "t")]).unique()
    pieces = (
        cuts.join(questions, on=QUESTION, how="inner")
        .filter(pl.col("t").is_between(pl.col("opens_at"), pl.col("scored_until")))
        .sort([*QUESTION, "t"])
        .with_columns(next=pl.col("t").shift(-1).over(QUESTION))
        .filter(pl.col("next").is_not_null())
    )
    length = _seconds("t", "next")
    hidden = pl.col("t") < pl.col("hidden_until")

    def weight(share: str) -> pl.Expr:
        hidden_part = length * pl.col(share) / pl.col("hidden_s")
        return (
            pl.when(hidden).then(hidden_part).otherwise(length * (1.0 - pl.col(share)) / pl.col("visible_s"))
        )

    return pieces.select(
        *QUESTION, "outcome", "y", "reference", "t", w_s=weight("s_weight"), w_c=weight("c_weight")
    )


def _with_reference(rows: pl.DataFrame, prices: pl.DataFrame) -> pl.DataFrame:
    """Add ``m`` per row: the last price observed at or before ``t`` (reference ``market``), or the
    median standing forecast of the cohort's non-baseline agents (``cohort_median``)."""
    observed = prices.select("market_id", "outcome", t="observed_at", price="price").sort("t")
    rows = rows.join_asof(
        observed, on="t", by=["market_id", "outcome"], strategy="backward", check_sortedness=False
    )
    median = rows.group_by([*QUESTION, "t"]).agg(median=pl.col("p").filter(~pl.col("baseline")).median())
    rows = rows.join(median, on=[*QUESTION, "t"], how="left")
    return rows.with_columns(
        m=pl.when(pl.col("reference") == "market").then(pl.col("price")).otherwise(pl.col("median"))
    )
