"""The leaderboard's metrics, each declared once: key, inputs, rule, aggregation, direction, label.

Everything that shows a metric reads this registry: the leaderboard's columns and sort keys
(``arena.scoring.ranking``), its bootstrap intervals and comparisons with the leader
(``arena.scoring.intervals``), the JSON export, the CLI table, the report's scores table, the
dashboard and docs/scoring.md's key list (``docs_table``; a test keeps it in step). Adding a
metric is one entry in ``METRICS``: a ``Ratio`` of row-wise sums over resolved bets or scored
stated events (the point value and, when ``interval``, its bootstrap come from the same sums),
a ``per_agent`` function of the leaderboard's ``Inputs`` (one row per agent), or a ``derive``
expression over the finished row (labels, flags).

Readings: the bet-implied metrics exist once per reading of a bet as a forecast (``fa`` with
the historical keys, ``kelly`` with ``_kelly`` appended; see ``arena.scoring.scores``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import polars as pl

from arena.scoring import summary
from arena.scoring.health import MIN_VALID_SHARE, health_metrics
from arena.scoring.inputs import Inputs
from arena.scoring.labels import brier_label, disagree, return_label
from arena.scoring.scores import READINGS, Reading, suffixed
from arena.scoring.tournament import tournament_standings

Format = Literal[
    "money", "pnl", "percent", "share", "score", "count", "number", "cost", "text", "time", "flag"
]
PerAgent = Callable[[Inputs], pl.DataFrame]
Derive = Callable[[Inputs], pl.Expr]
RANDOM_BRIER = 0.25  # always 50%: the "random" reference of the Brier skill score


def _resolved_bets(inputs: Inputs) -> pl.DataFrame:
    return inputs.bets.filter(pl.col("scored"))


def _stated_events(inputs: Inputs) -> pl.DataFrame:
    return inputs.events


def _imputed_events(inputs: Inputs) -> pl.DataFrame:
    return inputs.readings.imputed_events


# The row sources a ``Ratio`` adds up, per agent and market: each gives rows with ``agent``,
# ``market_id`` and the columns its ratios read. A metric over new rows adds its source here.
ROW_SOURCES: dict[str, Callable[[Inputs], pl.DataFrame]] = {
    "bets": _resolved_bets,
    "events": _stated_events,
    "imputed": _imputed_events,
}


def _stated_readings(inputs: Inputs) -> pl.DataFrame:
    return inputs.readings.per_agent


def _tournament(inputs: Inputs) -> pl.DataFrame:
    return tournament_standings(inputs.frames)


def _health(inputs: Inputs) -> pl.DataFrame:
    return health_metrics(inputs.frames.decisions, inputs.frames.agents["agent"])


@dataclass(frozen=True)
class Ratio:
    """``Σ num / Σ den`` per agent over the rows of ``source`` (a skill score: ``1 − that / reference``).

    ``source`` names a ``ROW_SOURCES`` entry: ``"bets"`` (resolved, non-void bets of
    ``scored_bets``) or ``"events"`` (scored stated events). The same sums per (agent, market)
    give the bootstrap replicates, so a mean's point value and its interval cannot disagree.
    """

    source: str  # a key of ROW_SOURCES
    num: pl.Expr
    den: pl.Expr | None = None  # None: 1 per row (a plain mean)
    skill: bool = False
    reference: float = 1.0  # a skill score is 1 − ratio / reference

    def __post_init__(self) -> None:
        if self.source not in ROW_SOURCES:
            raise ValueError(f"ratio source {self.source!r} is not one of {', '.join(ROW_SOURCES)}")

    def denominator(self) -> pl.Expr:
        return pl.lit(1.0) if self.den is None else self.den


@dataclass(frozen=True)
class MarketPnl:
    """Return %: its interval resamples P/L attributed to markets (``arena.scoring.pnl.market_pnl``)."""


@dataclass(frozen=True)
class Metric:
    """One leaderboard metric. Exactly one of ``ratio``, ``per_agent`` and ``derive`` computes it.

    ``better``: the direction ("higher" or "lower" is better; None: not a ranking). ``interval``
    adds ``<key>_lo``/``<key>_hi`` (bootstrap over markets); ``compared`` adds the comparison with
    the leader ``vs_leader_<key>_*``; ``flagged_by`` names the metric whose common resolved
    markets judge whether that comparison rests on too few markets. ``headline`` metrics are the
    compact leaderboards' columns. ``reading`` marks a bet-implied metric's reading.
    """

    key: str
    label: str
    description: str
    fmt: Format
    better: Literal["higher", "lower"] | None = None
    interval: bool = False
    compared: bool = False
    flagged_by: str | None = None
    headline: bool = False
    reading: Reading | None = None
    reference: float | None = None  # a chart's reference line: 0.25 for Brier, 0 for skills
    ratio: Ratio | None = None
    per_agent: PerAgent | None = None
    derive: Derive | None = None
    bootstrap: MarketPnl | None = None

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.ratio, self.per_agent, self.derive)) != 1:
            raise ValueError(f"metric {self.key!r}: give exactly one of ratio, per_agent, derive")
        if self.interval and self.ratio is None and self.bootstrap is None:
            raise ValueError(f"metric {self.key!r}: an interval needs a ratio or a bootstrap rule")

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.key, f"{self.key}_lo", f"{self.key}_hi") if self.interval else (self.key,)

    def display_label(self, implied: Reading) -> str:
        """The label, with the reading named unless it is the headline one (``scoring.implied``)."""
        return self.label if self.reading in (None, implied) else f"{self.label} [{self.reading}]"

    def axis_title(self, implied: Reading) -> str:
        """A chart axis: the label and which way is better."""
        better = f" ({self.better} is better)" if self.better else ""
        return self.display_label(implied) + better


def _scored(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Float64).fill_null(0.0)


def _reading_metrics(reading: Reading) -> tuple[Metric, ...]:
    """The bet-implied Brier family of one reading."""
    brier = suffixed("brier", reading)
    how = "amount / max bet" if reading == "fa" else "p + φ·(1 − p), φ = amount / cash"
    return (
        Metric(
            suffixed("brier_cohorts_mean", reading),
            "Brier (bets), mean of cohorts",
            "mean over the agent's cohorts of its Brier there, each cohort weighing the same (seed 002)",
            "score",
            better="lower",
            reading=reading,
            per_agent=summary.cohort_mean_briers,
        ),
        Metric(
            brier,
            "Brier (bets)",
            f"mean Brier of resolved bets, P(side) = {how}",
            "score",
            better="lower",
            interval=True,
            compared=True,
            headline=True,
            reading=reading,
            reference=RANDOM_BRIER,
            ratio=Ratio("bets", pl.col(brier)),
        ),
        Metric(
            suffixed("brier_label", reading),
            "Brier label",
            f"seed 002's word for `{brier}` (Perfect … Very Poor)",
            "text",
            reading=reading,
            derive=lambda _: brier_label(pl.col(brier)),
        ),
        Metric(
            suffixed("bss_random", reading),
            "Skill vs 50%",
            f"1 − {brier} / 0.25 (always saying 50%)",
            "score",
            better="higher",
            interval=True,
            reading=reading,
            ratio=Ratio("bets", pl.col(brier), skill=True, reference=RANDOM_BRIER),
        ),
        *(
            ()
            if reading != "fa"
            else (
                Metric(
                    "brier_market",
                    "Market Brier",
                    "mean Brier of the fill prices of the same bets",
                    "score",
                    ratio=Ratio("bets", pl.col("brier_market")),
                ),
            )
        ),
        Metric(
            suffixed("bss_market", reading),
            "Skill vs market",
            f"1 − {brier} / the market's Brier on the same bets",
            "score",
            better="higher",
            interval=True,
            headline=reading == "fa",
            reading=reading,
            reference=0.0,
            ratio=Ratio("bets", pl.col(brier), pl.col("brier_market"), skill=True),
        ),
    )


def _calibration_metrics() -> tuple[Metric, ...]:
    words = {
        "ece": ("ECE", "expected calibration error over 10 bins"),
        "reliability": ("Reliability", "Murphy reliability (miscalibration, lower is better)"),
        "resolution": ("Resolution", "Murphy resolution (discrimination, higher is better)"),
        "uncertainty": ("Uncertainty", "Murphy uncertainty: the outcomes' variance"),
    }
    return tuple(
        Metric(
            summary.calibration_key(source, part),
            f"{label} ({source.split('_')[0]})",
            f"{text}, "
            + (
                "stated probabilities"
                if source == "stated"
                else f"bet-implied forecasts ({source.replace('implied_', '') if '_' in source else 'fa'})"
            ),
            "score",
            reading=summary.IMPLIED_SOURCES.get(source),
            per_agent=summary.calibration_metrics,
        )
        for source in summary.SOURCES
        for part, (label, text) in words.items()
    )


def _conflict(_: Inputs) -> pl.Expr:
    """The readings whose Brier label points the other way from the return label, or null."""
    flags = [
        pl.when(disagree(pl.col(suffixed("brier", r)), pl.col("return_pct"))).then(pl.lit(r))
        for r in READINGS
    ]
    text = pl.concat_str(flags, separator=", ", ignore_nulls=True)
    return pl.when(text == "").then(None).otherwise(text)


def _money(
    key: str, label: str, description: str, fmt: Format = "money", *, headline: bool = False
) -> Metric:
    return Metric(key, label, description, fmt, headline=headline, per_agent=summary.money)


METRICS: tuple[Metric, ...] = (
    _money("value", "Value", "latest portfolio value: cash + open positions at their mark", headline=True),
    _money("cash", "Cash", "cash at the latest mark"),
    _money("pnl", "P/L", "value − bankroll", "pnl", headline=True),
    _money("realized_pnl", "Realised P/L", "P/L realised by sells and settlements", "pnl"),
    _money("unrealized_pnl", "Unrealised P/L", "open positions' value − their cost", "pnl"),
    _money("marked_at", "Marked at", "time of the latest mark", "time"),
    Metric(
        "return_pct",
        "Return %",
        "P/L / bankroll × 100",
        "percent",
        better="higher",
        interval=True,
        compared=True,
        flagged_by="brier",
        headline=True,
        reference=0.0,
        per_agent=summary.money,
        bootstrap=MarketPnl(),
    ),
    Metric(
        "return_label",
        "Return label",
        "seed 002's word for that return (Exceptional … Very Poor)",
        "text",
        derive=lambda _: return_label(pl.col("return_pct")),
    ),
    Metric(
        "label_conflict",
        "Labels disagree",
        "readings whose Brier label and return label point opposite ways, e.g. 'fa' (null: none)",
        "text",
        derive=_conflict,
    ),
    Metric("bets", "Bets", "bets placed", "count", headline=True, per_agent=summary.bet_activity),
    Metric("staked", "Staked", "dollars staked", "money", per_agent=summary.bet_activity),
    Metric(
        "resolved_bets",
        "Resolved bets",
        "bets on resolved, non-void markets",
        "count",
        per_agent=summary.bet_activity,
    ),
    Metric(
        "resolved_markets",
        "Resolved markets",
        "resolved, non-void markets bet on",
        "count",
        headline=True,
        per_agent=summary.bet_activity,
    ),
    Metric(
        "few_markets",
        "Few markets",
        "fewer resolved markets than min_markets: intervals are wide",
        "flag",
        derive=lambda inputs: pl.col("resolved_markets") < inputs.min_markets,
    ),
    Metric(
        "win_rate",
        "Win rate",
        "won / bets on decisively resolved markets",
        "share",
        better="higher",
        headline=True,
        ratio=Ratio("bets", _scored("won"), pl.col("decisive").cast(pl.Float64)),
    ),
    *(metric for reading in READINGS for metric in _reading_metrics(reading)),
    Metric(
        "stated_events", "Stated events", "stated questions scored", "count", per_agent=summary.stated_metrics
    ),
    Metric(
        "stated_brier",
        "Brier (stated)",
        "mean over events of the time-weighted Brier of stated probabilities, as stated",
        "score",
        better="lower",
        interval=True,
        compared=True,
        reference=RANDOM_BRIER,
        ratio=Ratio("events", pl.col("brier")),
    ),
    Metric(
        "log_score",
        "Log score",
        "mean over events of the time-weighted log score (0 perfect)",
        "score",
        better="higher",
        interval=True,
        compared=True,
        headline=True,
        ratio=Ratio("events", pl.col("log_score")),
    ),
    Metric(
        "rel_log_score",
        "Log score vs market",
        "mean over events of ln(p/m) for what happened, m the price seen",
        "score",
        better="higher",
        interval=True,
        ratio=Ratio(
            "events", _scored("rel_log_score"), pl.col("rel_log_score").is_not_null().cast(pl.Float64)
        ),
    ),
    Metric(
        "stated_brier_imputed",
        "Brier (stated, imputed)",
        "mean over every offered (round, market) event of the Brier of the standing forecast, "
        "the round's market price where the agent had none (ForecastBench)",
        "score",
        better="lower",
        interval=True,
        compared=True,
        headline=True,
        reference=RANDOM_BRIER,
        ratio=Ratio("imputed", pl.col("brier")),
    ),
    Metric(
        "log_score_imputed",
        "Log score (imputed)",
        "the same events' mean log score",
        "score",
        better="higher",
        interval=True,
        compared=True,
        ratio=Ratio("imputed", pl.col("log_score")),
    ),
    Metric(
        "imputed_share",
        "Imputed share",
        "share of the offered (round, market) events scored at the market price",
        "share",
        per_agent=_stated_readings,
    ),
    Metric("imputed_events", "Imputed events", "events scored", "count", per_agent=_stated_readings),
    Metric(
        "stated_brier_autocast",
        "Brier (stated, Autocast)",
        "imputed stated Brier normalised per market: Σ over outcomes / 2 (seed 001; binary: the Brier)",
        "score",
        better="lower",
        per_agent=_stated_readings,
    ),
    Metric(
        "provisional_events",
        "Open stated events",
        "stated questions not resolved yet (their scores are provisional)",
        "count",
        per_agent=_stated_readings,
    ),
    Metric(
        "stated_brier_provisional",
        "Brier (stated, provisional)",
        "stated Brier of the open questions against their latest price, never mixed into resolved scores",
        "score",
        per_agent=_stated_readings,
    ),
    Metric(
        "leakage_guard",
        "Leakage guard",
        "on / off for an LLM of a replay cohort (off: no knowledge_cutoff), null otherwise (seed 001)",
        "text",
        per_agent=_stated_readings,
    ),
    Metric(
        "rounds_before_cutoff",
        "Rounds before cutoff",
        "replay rounds earlier than the agent's knowledge cutoff (flagged)",
        "count",
        per_agent=_stated_readings,
    ),
    Metric(
        "tournament_score",
        "Tournament score",
        "s: Σ over questions of the time-weighted mean of ln(f/m) over the whole window (seed 000)",
        "number",
        better="higher",
        per_agent=_tournament,
    ),
    Metric(
        "coverage",
        "Coverage",
        "c: mean over all the cohort's questions of the weighted share of the window with a forecast",
        "share",
        per_agent=_tournament,
    ),
    Metric(
        "tournament_take",
        "Tournament take",
        "S / ΣS with S = c · exp(s)",
        "share",
        better="higher",
        per_agent=_tournament,
    ),
    Metric(
        "tournament_prize",
        "Tournament prize",
        "take × the cohorts' prize_pool, in dollars",
        "money",
        per_agent=_tournament,
    ),
    *_calibration_metrics(),
    Metric(
        "return_days", "Return days", "daily returns measured", "count", per_agent=summary.portfolio_metrics
    ),
    Metric(
        "volatility",
        "Volatility",
        "standard deviation of daily returns",
        "number",
        per_agent=summary.portfolio_metrics,
    ),
    Metric(
        "sharpe",
        "Sharpe",
        "mean / standard deviation of daily returns (not annualised)",
        "number",
        better="higher",
        per_agent=summary.portfolio_metrics,
    ),
    Metric(
        "max_drawdown",
        "Max drawdown",
        "largest fall from a running peak, as a fraction",
        "share",
        better="lower",
        per_agent=summary.portfolio_metrics,
    ),
    Metric(
        "turnover",
        "Turnover",
        "money traded (buys + sells) / bankroll",
        "number",
        per_agent=summary.portfolio_metrics,
    ),
    Metric(
        "deployed_share",
        "Deployed",
        "mean share of value held in positions over daily closes",
        "share",
        per_agent=summary.portfolio_metrics,
    ),
    Metric("decisions", "Decisions", "decisions made", "count", per_agent=summary.portfolio_metrics),
    Metric(
        "valid_rate",
        "Valid answers",
        "share of decisions without error",
        "share",
        headline=True,
        per_agent=summary.portfolio_metrics,
    ),
    Metric(
        "failed",
        "Failed",
        f"fewer than {MIN_VALID_SHARE:.0%} of its answers valid: not ranked among working agents",
        "flag",
        per_agent=_health,
    ),
    Metric(
        "cost",
        "Model cost",
        "provider cost in dollars",
        "cost",
        headline=True,
        per_agent=summary.portfolio_metrics,
    ),
    Metric(
        "cost_per_decision",
        "Cost per decision",
        "cost / decisions",
        "cost",
        per_agent=summary.portfolio_metrics,
    ),
    Metric("tokens", "Tokens", "prompt + completion tokens", "count", per_agent=summary.portfolio_metrics),
    Metric(
        "mean_latency_s",
        "Latency (s)",
        "mean seconds per decision",
        "number",
        per_agent=summary.portfolio_metrics,
    ),
)

BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}
# metric -> True when higher is better (the sort direction of ``by``).
SORTABLE: dict[str, bool] = {m.key: m.better == "higher" for m in METRICS if m.better is not None}
COMPARED: tuple[str, ...] = tuple(m.key for m in METRICS if m.compared)
COMPARISON_FIELDS = ("diff", "diff_lo", "diff_hi", "p_value", "share_better", "common_markets", "few_markets")
IDENTITY = ("rank", "agent", "agent_kind", "baseline", "cohorts", "bankroll")


def comparison_columns() -> tuple[str, ...]:
    return tuple(f"vs_leader_{key}_{field}" for key in COMPARED for field in COMPARISON_FIELDS)


COLUMNS: tuple[str, ...] = (
    *IDENTITY,
    *(column for metric in METRICS for column in metric.columns),
    *comparison_columns(),
)


def metric(key: str) -> Metric:
    """The registered metric ``key``, or a one-line error naming the choices."""
    if key not in BY_KEY:
        raise ValueError(f"unknown metric {key!r}; choose one of {', '.join(BY_KEY)}")
    return BY_KEY[key]


def headline(implied: Reading) -> tuple[Metric, ...]:
    """The compact leaderboards' metrics: the headline reading's bet Brier first, the other beside it."""
    chosen = [m for m in METRICS if m.headline]
    first = [m for m in chosen if m.reading == implied]
    rest = [m for m in chosen if m.reading not in (None, implied)]
    at = next(i for i, m in enumerate(chosen) if m.reading is not None)
    plain = [m for m in chosen if m.reading is None]
    return (*plain[:at], *first, *rest, *plain[at:])


def docs_table() -> str:
    """The table of metric keys in docs/scoring.md ("JSON"), generated from the registry."""
    lines = ["| key | with | better | meaning |", "|---|---|---|---|"]
    for m in METRICS:
        extra = "`_lo`, `_hi`" if m.interval else ""
        if m.compared:
            extra += (", " if extra else "") + "`vs_leader_*`"
        lines.append(f"| `{m.key}` | {extra} | {m.better or ''} | {m.description} |")
    return "\n".join(lines)
