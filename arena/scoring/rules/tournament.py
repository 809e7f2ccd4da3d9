"""Metaculus tournament scoring, exactly as Metaculus's rules describe it (docs/scoring.md "Tournament").

A *question* is a market offered to a cohort that resolved (not void), with a window of positive
length in ``frames.windows``: from the cohort's first round that offered it to the market's close
or the cohort's end, whichever is first. The window's first part, up to ``hidden_until``, is the
hidden period, during which agents were not shown the market's price.

Per agent and question, ``x(t) = ℓ(f(t)) − ℓ(m(t))`` while the agent has a forecast standing and
the question has not resolved yet, else 0: silent time and time after an early resolution score
0 but stay in the window (averaging over the standing time only would make the score improper).
``f`` is the agent's standing probability, ``m`` the reference (the market's last price, or the
median of the standing forecasts of the cohort's non-baseline agents); ``ℓ`` is the log score of
``arena.scoring.rules.scores``, so ``x = ln(f/m)`` for the outcome that happened (a 50-50 resolution
scores half of each side; both are clipped at 0.1%, as Metaculus does). Then

- ``s_q = s_weight · mean_hidden(x) + (1 − s_weight) · mean_visible(x)``, each mean over the whole
  period (with ``s_weight = hidden_fraction`` every moment of the window weighs the same);
- ``c_q`` likewise with ``c_weight`` and 1 while a forecast stands (0 after resolution);
- per agent ``s = Σ_q s_q`` (a sum: every question adds to the lead), ``c`` = mean of ``c_q`` over
  ALL the questions of its cohorts, ``S = c · exp(s)``, take ``S / ΣS``, prize ``take × pool``
  (a pool only one agent covers pays it S / (S + 1): ``split_prizes``).

Forecasts are those of ``arena.scoring.load.frames.FORECASTS``: a statement stands until the agent's
next one on the same outcome. Binary markets are scored on YES (``y`` 1, 0 or ½), a multi-outcome
market on the outcome that won. Time without a reference price (none observed yet, or no
non-baseline forecast to take the median of) scores 0 but counts as coverage. Across cohorts the
questions pool into one tournament whose pool is the sum of the cohorts' pools.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import polars as pl

from arena.cohorts.config import TournamentConfig
from arena.scoring.load.frames import ScoringFrames
from arena.scoring.rules.scores import log_score, side_outcome
from arena.scoring.rules.sums import fsum

QUESTION = ["cohort_id", "market_id"]
AGENT_QUESTION = ["cohort_id", "agent", "market_id"]
COLUMNS = ("tournament_score", "coverage", "tournament_take", "tournament_prize")
_DEFAULTS = TournamentConfig()


def tournament_standings(frames: ScoringFrames) -> pl.DataFrame:
    """One row per agent name: ``tournament_score`` (s), ``coverage`` (c), ``tournament_take``
    (S / ΣS) and ``tournament_prize``; all null for an agent whose cohorts have no question yet."""
    questions = tournament_questions(frames)
    per_seat = (
        question_scores(frames, questions)
        .group_by("cohort_id", "agent", maintain_order=True)
        .agg(s=fsum(pl.col("s_q")), c=fsum(pl.col("c_q")))
    )
    per_agent = (
        frames.agents.select("cohort_id", "agent")
        .join(questions.group_by("cohort_id").agg(questions=pl.len()), on="cohort_id", how="left")
        .join(per_seat, on=["cohort_id", "agent"], how="left", maintain_order="left")
        .sort("agent", "cohort_id")
        .group_by("agent", maintain_order=True)
        .agg(pl.sum("questions"), fsum(pl.col("s")).alias("s"), fsum(pl.col("c")).alias("c"))
    )
    scored = pl.col("questions") > 0
    return split_prizes(
        per_agent.select(
            "agent",
            tournament_score=pl.when(scored).then(pl.col("s")),
            coverage=pl.when(scored).then(pl.col("c") / pl.col("questions")),
        ).sort("agent"),
        float(prize_pool(frames)),
    )


def split_prizes(standings: pl.DataFrame, pool: float) -> pl.DataFrame:
    """Add ``tournament_take`` = S / ΣS with S = c · exp(s), and ``tournament_prize`` = take × pool
    (null when nobody has any S to split).

    A pool that only one agent covers (c > 0) is no contest: S / ΣS would pay it the whole pool
    however far below the reference its s fell. It is paid what it would take against the
    reference itself, which forecasts every question all the time (s = 0, c = 1, so S = 1):
    ``S / (S + 1)`` (half the pool for full coverage at parity, nearly nothing far behind or
    covering little); the rest of the pool is not paid.
    """
    big_s = pl.col("coverage") * pl.col("tournament_score").exp()
    total = standings.select(big_s.sum()).item() or 0.0
    if lone_covered(standings) is not None:
        take = big_s / (big_s + 1.0)
    else:
        take = big_s / total if total > 0 else pl.lit(None, pl.Float64)
    return standings.with_columns(tournament_take=take).with_columns(
        tournament_prize=pl.col("tournament_take") * pool
    )


def lone_covered(table: pl.DataFrame) -> str | None:
    """The agent of a standings or leaderboard table that alone has coverage (paid against the
    reference by ``split_prizes``), or None when several do or none does."""
    covered = table.filter(pl.col("coverage").fill_null(0.0) > 0)
    return str(covered["agent"].item()) if len(covered) == 1 else None


def prize_pool(frames: ScoringFrames) -> Decimal:
    """The dollars split by take: the sum of the pools of the cohorts ``frames`` holds. (A prize,
    take × pool, is a share and so a float, like every other statistic.)"""
    return Decimal(_settings(frames)["prize_pool"].sum())


def question_scores(frames: ScoringFrames, questions: pl.DataFrame) -> pl.DataFrame:
    """Per (cohort, agent, market) of every question an agent stated on, in question then seat
    order: ``s_q`` and ``c_q`` (see the module docstring; no row: scores 0, covers 0).

    A forecast is constant over each of its spans, so its part of ``s_q`` is ``ℓ(f)`` times the
    reference-priced weight of the span, minus the weighted integral of ``ℓ(m)`` over it; both are
    differences of one running integral per question (``_timeline``). The work grows with the
    statements plus the question's price points, never with their product.
    """
    seats = frames.agents.select("cohort_id", "agent").with_row_index("seat")
    timeline = _timeline(frames, questions)
    spans = _spans(frames, questions, seats)
    for end in ("a", "b"):
        spans = _integrals_at(spans, timeline, end)
    score = log_score(pl.col("p"), pl.col("y")) * (pl.col("priced_b") - pl.col("priced_a")) - (
        pl.col("reference_b") - pl.col("reference_a")
    )
    per_question = _run_sums(
        spans.sort("qid", "seat", "a"), s_q=score, c_q=pl.col("covered_b") - pl.col("covered_a")
    )
    return (
        per_question.sort("qid", "seat")  # integers: a stable order, cheaper than sorting by names
        .join(questions.select("qid", "market_id"), on="qid", maintain_order="left")
        .join(seats, on="seat", maintain_order="left")
        .select(*AGENT_QUESTION, "s_q", "c_q")
    )


def _run_sums(ordered: pl.DataFrame, **columns: pl.Expr) -> pl.DataFrame:
    """Per (qid, seat) run of ``ordered`` (sorted by them, then time): the sum of each expression,
    added in row order by numpy (one order, the same bits every run; a parallel ``group_by`` sum
    would not guarantee that, and a list per group is slow for tens of thousands of groups)."""
    if ordered.is_empty():
        return ordered.select("qid", "seat", *(pl.lit(0.0).alias(name) for name in columns))
    qid, seat = ordered["qid"].to_numpy(), ordered["seat"].to_numpy()
    starts = np.flatnonzero(np.concatenate(([True], (qid[1:] != qid[:-1]) | (seat[1:] != seat[:-1]))))
    values = ordered.select(**columns)
    return (
        ordered[starts]
        .select("qid", "seat")
        .with_columns(
            pl.Series(name, np.add.reduceat(values[name].to_numpy(), starts), dtype=pl.Float64)
            for name in columns
        )
    )


def _spans(frames: ScoringFrames, questions: pl.DataFrame, seats: pl.DataFrame) -> pl.DataFrame:
    """Each standing forecast's span ``[a, b)`` inside its question's scored time, with ``p`` and ``y``:
    from its statement (or the window's start) to the agent's next statement (or the resolution)."""
    key = [*QUESTION, "outcome"]
    statements = (
        frames.forecasts.select(*key, "agent", "p", "stated_at")
        .join(questions.select(*key, "qid", "y", "opens_at", "scored_until"), on=key, how="inner")
        .join(seats, on=["cohort_id", "agent"])
        .sort("qid", "seat", "stated_at")  # integers: much faster than sorting names
    )
    following = _next_in_group("stated_at", ["qid", "seat"]).fill_null(pl.col("scored_until"))
    return (
        statements.with_columns(
            a=pl.max_horizontal("stated_at", "opens_at"),
            b=pl.min_horizontal(following, "scored_until"),
        )
        .filter(pl.col("b") > pl.col("a"))
        .select("qid", "seat", "p", "y", "a", "b")
    )


def _next_in_group(column: str, group: list[str]) -> pl.Expr:
    """The next row's ``column`` within the same ``group`` (rows sorted by group, then time)."""
    same = pl.all_horizontal([pl.col(c) == pl.col(c).shift(-1) for c in group])
    return pl.when(same).then(pl.col(column).shift(-1))


def _timeline(frames: ScoringFrames, questions: pl.DataFrame) -> pl.DataFrame:
    """Per question, the instants ``t`` where a weight or the reference may change (window start,
    end of the hidden period, resolution, statements, prices), with the running integrals up to
    ``t`` and their slopes until the next instant: ``priced`` (score weight where ``m`` is known),
    ``reference`` (score weight × ``ℓ(m)``) and ``covered`` (coverage weight)."""
    key = [*QUESTION, "outcome"]
    bounds = questions.select("qid", t=pl.concat_list("opens_at", "hidden_until", "scored_until")).explode(
        "t"
    )
    stated = frames.forecasts.join(questions.select(*key, "qid"), on=key).select("qid", t="stated_at")
    observed = frames.prices.join(
        questions.filter(pl.col("reference") == "market").select(*key, "qid"), on=["market_id", "outcome"]
    ).select("qid", "price", t="observed_at")
    needed = ["qid", *key, "y", "reference", "opens_at", "hidden_until", "scored_until"]
    instants = (
        pl.concat(
            [bounds, stated, observed.select("qid", "t")]
        )  # a repeated instant adds a piece of length 0
        .join(questions.select(*needed, "hidden_s", "visible_s", "s_weight", "c_weight"), on="qid")
        .filter(pl.col("t").is_between(pl.col("opens_at"), pl.col("scored_until")))
        .sort("qid", "t")
    )
    instants = _with_reference(frames, instants, observed)
    length = _seconds("t", "next").fill_null(0.0)
    known = pl.col("m").is_not_null().cast(pl.Float64)
    slopes = {
        "priced": _rate("s_weight") * known,
        "reference": (_rate("s_weight") * known * log_score(pl.col("m"), pl.col("y"))).fill_null(0.0),
        "covered": _rate("c_weight"),
    }
    return (
        instants.with_columns(next=_next_in_group("t", ["qid"]))
        .with_columns(**{f"{name}_slope": slope for name, slope in slopes.items()})
        .with_columns(
            # the running integral up to t: every earlier piece, slope × length
            (pl.col(f"{name}_slope") * length).cum_sum().shift(1, fill_value=0.0).over("qid").alias(name)
            for name in slopes
        )
        .select("qid", "t", *slopes, *(f"{name}_slope" for name in slopes))
    )


def _rate(share: str) -> pl.Expr:
    """Weight per second at ``t``: the period's share spread evenly over its length."""
    hidden = pl.col("t") < pl.col("hidden_until")
    return (
        pl.when(hidden & (pl.col("hidden_s") > 0))
        .then(pl.col(share) / pl.col("hidden_s"))
        .when(~hidden & (pl.col("visible_s") > 0))
        .then((1.0 - pl.col(share)) / pl.col("visible_s"))
        .otherwise(0.0)
    )


def _integrals_at(spans: pl.DataFrame, timeline: pl.DataFrame, end: str) -> pl.DataFrame:
    """Add ``priced_<end>``, ``reference_<end>``, ``covered_<end>``: the running integrals at the
    span's ``end`` (those at the last instant at or before it, plus slope × the time since)."""
    names = ("priced", "reference", "covered")
    # The timeline is sorted by (qid, t); an as-of join by qid needs each side sorted by the key
    # within each qid only, so the spans are sorted that way and the timeline is used as it is.
    instants = timeline.select(
        "qid", pl.col("t").alias(end), "t", *names, *(f"{name}_slope" for name in names)
    )
    joined = spans.sort("qid", end).join_asof(
        instants,
        on=end,
        by="qid",
        strategy="backward",
        check_sortedness=False,  # sorted within each qid (see above)
    )
    since = _seconds("t", end)
    return joined.with_columns(
        (pl.col(name) + pl.col(f"{name}_slope") * since).alias(f"{name}_{end}") for name in names
    ).drop("t", *names, *(f"{name}_slope" for name in names))


def _settings(frames: ScoringFrames) -> pl.DataFrame:
    """Each cohort's settings: its ``tournaments`` row, or the defaults."""
    cohorts = frames.agents.select("cohort_id").unique()
    defaults = {k: getattr(_DEFAULTS, k) for k in ("prize_pool", "reference", "s_weight", "c_weight")}
    return cohorts.join(frames.tournaments, on="cohort_id", how="left").with_columns(
        pl.col(k).fill_null(v) for k, v in defaults.items()
    )


def tournament_questions(frames: ScoringFrames) -> pl.DataFrame:
    """Every scorable question, one row per (cohort, market) with an id ``qid``: its window, the
    outcome scored with its ``y``, the time it is scored until, and its cohort's settings."""
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
        .join(_settings(frames), on="cohort_id", how="inner")
        .with_columns(
            y=side_outcome(),
            scored_until=pl.max_horizontal("opens_at", pl.min_horizontal("closes_at", "resolved_at")),
            hidden_s=_seconds("opens_at", "hidden_until"),
            visible_s=_seconds("hidden_until", "closes_at"),
        )
        .with_columns(_on_periods_that_exist(w) for w in ("s_weight", "c_weight"))
        .drop("resolution", "winner", "resolved_at")
        .sort("cohort_id", "market_id")  # ids in one order, so every sum below has one order
        .with_row_index("qid")
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


def _with_reference(frames: ScoringFrames, instants: pl.DataFrame, observed: pl.DataFrame) -> pl.DataFrame:
    """Add ``m`` at each instant: the last price ``observed`` at or before it (reference ``market``),
    or the median standing forecast of the cohort's non-baseline agents (``cohort_median``)."""
    instants = instants.join_asof(  # sorted by t within each question, as join_asof needs
        observed.sort("qid", "t"), on="t", by="qid", strategy="backward", check_sortedness=False
    )
    if not (instants["reference"] == "cohort_median").any():
        return instants.with_columns(m=pl.col("price"))
    forecasters = frames.agents.filter(~pl.col("baseline")).select("cohort_id", "agent")
    standing = frames.forecasts.select("cohort_id", "agent", "market_id", "outcome", "p", t="stated_at")
    medians = (
        instants.filter(pl.col("reference") == "cohort_median")
        .select("qid", *QUESTION, "outcome", "t")
        .join(forecasters, on="cohort_id", how="inner")
        .sort("t")
        .join_asof(
            standing.sort("t"),
            on="t",
            by=["cohort_id", "agent", "market_id", "outcome"],
            strategy="backward",
            check_sortedness=False,
        )
        .group_by("qid", "t")
        .agg(median=pl.col("p").median())
    )
    return instants.join(medians, on=["qid", "t"], how="left", maintain_order="left").with_columns(
        m=pl.when(pl.col("reference") == "market").then(pl.col("price")).otherwise(pl.col("median"))
    )
