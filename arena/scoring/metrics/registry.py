"""The leaderboard's metrics, each declared once: key, inputs, rule, aggregation, direction, label.

Everything that shows a metric reads this registry: the leaderboard's columns and sort keys
(``arena.scoring.board.ranking``), its bootstrap intervals and comparisons with the leader
(``arena.scoring.stats.intervals``), the JSON export, the CLI table, the report's scores table, the
dashboard and docs/scoring.md's key list (``docs_table``; a test keeps it in step). Adding a
metric is one entry in ``METRICS``: a ``Ratio`` of row-wise sums over resolved bets or scored
stated events (the point value and, when ``interval``, its bootstrap come from the same sums),
a ``per_agent`` function of the leaderboard's ``Inputs`` (one row per agent), or a ``derive``
expression over the finished row (labels, flags).

Readings: the bet-implied metrics exist once per reading of a bet as a forecast (``fa`` with
the historical keys, ``kelly`` with ``_kelly`` appended; see ``arena.scoring.rules.scores``).
"""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import READINGS, Reading, suffixed
from arena.scoring.metrics import summary
from arena.scoring.metrics.adjusted import adjusted_family, bet_adjusted_metrics
from arena.scoring.metrics.families import calibration_metrics, reading_metrics
from arena.scoring.metrics.inputs import Inputs
from arena.scoring.metrics.labels import disagree, return_label
from arena.scoring.metrics.spec import RANDOM_BRIER, Format, MarketPnl, Metric, Ratio
from arena.scoring.rules.health import MIN_VALID_SHARE, health_metrics
from arena.scoring.rules.imputed import HIDDEN_LIMIT, HIDDEN_MIN
from arena.scoring.rules.tournament import tournament_standings


def _stated_readings(inputs: Inputs) -> pl.DataFrame:
    return inputs.readings.per_agent


def _tournament(inputs: Inputs) -> pl.DataFrame:
    return tournament_standings(inputs.frames)


def _health(inputs: Inputs) -> pl.DataFrame:
    return health_metrics(inputs.frames.decisions, inputs.frames.agents["agent"])


def _scored(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Float64).fill_null(0.0)


SELECTIVE_LIMIT = 0.1
"""An agent with no forecast standing on more than this share of the rounds and markets that
showed it a price stated selectively: its as-stated scores average only what it chose."""
HIDDEN_PRICE_SEEN = "hidden_price_seen"
AS_STATED_FLAGS = ("stated_selective", HIDDEN_PRICE_SEEN)


def _weighted(column: str) -> pl.Expr:
    """A per-event score times its ``weight``: each market weighs once in the mean (the events of
    a multi-outcome market share it)."""
    return pl.col("weight") * _scored(column)


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
        "Forecaster Arena's word for that return (Exceptional … Very Poor)",
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
    *(metric for reading in READINGS for metric in reading_metrics(reading)),
    *bet_adjusted_metrics(),
    Metric(
        "stated_events", "Stated events", "stated questions scored", "count", per_agent=summary.stated_metrics
    ),
    Metric(
        "stated_brier",
        "Brier (stated)",
        "mean over stated markets of the time-weighted Brier of stated probabilities, as stated",
        "score",
        better="lower",
        interval=True,
        compared=True,
        reference=RANDOM_BRIER,
        demoted_by=AS_STATED_FLAGS,
        ratio=Ratio("events", _weighted("brier"), pl.col("weight")),
    ),
    Metric(
        "log_score",
        "Log score",
        "mean over stated markets of the time-weighted log score (0 perfect)",
        "score",
        better="higher",
        interval=True,
        compared=True,
        demoted_by=AS_STATED_FLAGS,
        ratio=Ratio("events", _weighted("log_score"), pl.col("weight")),
    ),
    Metric(
        "rel_log_score",
        "Log score vs market",
        "mean over stated markets of ln(p/m) for what happened, m the price seen",
        "score",
        better="higher",
        interval=True,
        demoted_by=AS_STATED_FLAGS,
        ratio=Ratio(
            "events",
            _weighted("rel_log_score"),
            pl.col("weight") * pl.col("rel_log_score").is_not_null().cast(pl.Float64),
        ),
    ),
    Metric(
        "stated_brier_imputed",
        "Brier (stated, imputed)",
        "mean over every offered (round, market) of the Brier of the standing forecast; where the "
        "agent had none, the price shown (ForecastBench) or 0.5 where it was hidden; null for an "
        "agent that never stated",
        "score",
        better="lower",
        interval=True,
        compared=True,
        headline=True,
        reference=RANDOM_BRIER,
        demoted_by=(HIDDEN_PRICE_SEEN,),
        ratio=Ratio("imputed", _weighted("brier"), pl.col("weight")),
    ),
    Metric(
        "log_score_imputed",
        "Log score (imputed)",
        "the same events' mean log score",
        "score",
        better="higher",
        interval=True,
        compared=True,
        headline=True,
        demoted_by=(HIDDEN_PRICE_SEEN,),
        ratio=Ratio("imputed", _weighted("log_score"), pl.col("weight")),
    ),
    Metric(
        "imputed_share",
        "Imputed share",
        "share of the offered (round, market) events imputed (the price shown, or 0.5 if hidden)",
        "share",
        per_agent=_stated_readings,
    ),
    Metric("imputed_events", "Imputed events", "events scored", "count", per_agent=_stated_readings),
    Metric(
        "unstated_share",
        "Unstated share",
        "share of the offered (round, market) events that showed a price where it had no forecast "
        "standing: what its as-stated scores leave out by choice",
        "share",
        per_agent=_stated_readings,
    ),
    Metric(
        "stated_selective",
        "Stated selectively",
        f"unstated share above {SELECTIVE_LIMIT:.0%}: its as-stated scores average only what it "
        "chose to state (flagged in every view)",
        "flag",
        derive=lambda _: pl.col("unstated_share") > SELECTIVE_LIMIT,
    ),
    Metric(
        "hidden_price_share",
        "Hidden price stated",
        "share of its statements in rounds that hid the price that equal the hidden price",
        "share",
        per_agent=_stated_readings,
    ),
    Metric(
        HIDDEN_PRICE_SEEN,
        "Hidden price seen",
        f"stated the hidden price in at least {HIDDEN_LIMIT:.0%} of its statements in hidden rounds "
        f"({HIDDEN_MIN} or more): the price reached it (flagged in every view)",
        "flag",
        per_agent=_stated_readings,
    ),
    Metric(
        "stated_brier_autocast",
        "Brier (stated, Autocast)",
        "imputed stated Brier normalised per market: Σ over outcomes / 2 (Autocast; binary: the Brier)",
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
        "stated_brier_overall",
        "Brier (stated, overall)",
        "mean over the resolved stated events (stated_brier) and the open ones (stated_brier_provisional) "
        "together, each market once: ForecastBench's market score, provisional while events are open",
        "score",
        better="lower",
        reference=RANDOM_BRIER,
        per_agent=summary.stated_overall,
    ),
    *adjusted_family("stated"),
    Metric(
        "leakage_guard",
        "Leakage guard",
        "on / off for an LLM of a replay cohort (off: no knowledge_cutoff), null otherwise (Autocast rules)",
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
        "s: Σ over questions of the time-weighted mean of ln(f/m) over the whole window (Metaculus rules)",
        "number",
        better="higher",
        demoted_by=(HIDDEN_PRICE_SEEN,),
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
        "S / ΣS with S = c · exp(s); a pool only one agent covers pays it S / (S + 1)",
        "share",
        better="higher",
        headline=True,
        demoted_by=(HIDDEN_PRICE_SEEN,),
        per_agent=_tournament,
    ),
    Metric(
        "tournament_prize",
        "Tournament prize",
        "take × the cohorts' prize_pool, in dollars",
        "money",
        per_agent=_tournament,
    ),
    *calibration_metrics(),
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
COMPARISON_FIELDS = (
    *("diff", "diff_lo", "diff_hi", "p_value", "p_value_reason"),
    *("share_better", "wins", "ties", "losses", "common_markets", "few_markets"),
)
IDENTITY = (
    *("rank", "agent", "agent_kind", "baseline", "external", "mock", "replicates", "cohorts", "bankroll"),
)


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
