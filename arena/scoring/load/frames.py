"""The polars frames every score is computed from, with their column contracts.

Scoring is a set of pure functions over these frames. They hold the stored log (fills,
resolutions, prices, stated probabilities, marks, decisions) and nothing derived, so every
number on a leaderboard can be recomputed from the database by ``arena.scoring.load.database`` or from
any export that follows the same column specs.

Conventions shared by all frames:

- Times are ``Datetime("us", "UTC")``: the time the event happened (simulated time in replay).
- Money (amounts, cash, P/L, cost) is ``Decimal(38, 6)`` so sums are exact; probabilities and
  prices are ``Float64`` because they only feed statistics.
- ``agent`` is the agent's name. Within a cohort it is unique; across cohorts the same name is
  the same bettor, which is how cross-cohort rows are formed.
- Binary markets use the outcomes ``"YES"`` and ``"NO"``; a multi-outcome market uses its own
  outcome names and resolves with kind ``OUTCOME`` and a ``winner``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import polars as pl

from arena.core.clock import ensure_utc
from arena.scoring.load.frame_spec import Check, Column, FrameError, FrameSpec, in_unit_interval, non_negative

MONEY = pl.Decimal(38, 6)
COST = pl.Decimal(38, 10)  # model costs are fractions of a cent
TIME = pl.Datetime("us", "UTC")

BUY, SELL, SETTLE = "buy", "sell", "settle"
FILL_KINDS = (BUY, SELL, SETTLE)
RESOLUTION_KINDS = ("YES", "NO", "VOID", "5050", "OUTCOME")

Reading = Literal["fa", "kelly"]
"""How a bet is read as a forecast: Forecaster Arena's bet size (``fa``) or the Kelly stake."""
READINGS: tuple[Reading, ...] = ("fa", "kelly")
READING_RULES: dict[Reading, str] = {"fa": "Forecaster Arena's bet-size rule", "kelly": "the Kelly stake"}
"""Each reading's rule in words, for captions that name the reading."""


def suffixed(key: str, reading: Reading) -> str:
    """The column of ``key`` in a reading: unchanged for ``fa`` (the stable keys), ``_kelly`` added."""
    return key if reading == "fa" else f"{key}_{reading}"


AGENTS = FrameSpec(
    "agents",
    "One row per agent seat in a cohort: the roster, so agents that never bet still score.",
    (
        Column("cohort_id", pl.String(), "cohort the seat belongs to"),
        Column("agent", pl.String(), "agent name, unique within the cohort"),
        Column("agent_kind", pl.String(), "llm, baseline, user, ... as configured"),
        Column("baseline", pl.Boolean(), "true for reference bots (marked on the leaderboard)"),
        Column("mock", pl.Boolean(), "true for an LLM agent of the mock provider: canned answers, no model"),
        Column("bankroll", MONEY, "initial bankroll of the seat: the capital allocated to it"),
    ),
    (Check("bankroll", pl.col("bankroll") > 0, "positive"),),
    unique=("cohort_id", "agent"),
)

FILLS = FrameSpec(
    "fills",
    "One row per executed fill: buys (bets), sells and settlements.",
    (
        Column("cohort_id", pl.String(), "cohort of the agent"),
        Column("agent", pl.String(), "agent name"),
        Column("market_id", pl.String(), "arena market id venue:venue_id"),
        Column("venue", pl.String(), "polymarket, manifold, ..."),
        Column("category", pl.String(), "market category when the venue gives one", nullable=True),
        Column("outcome", pl.String(), "the side bought, sold or settled"),
        Column("kind", pl.String(), "buy, sell or settle"),
        Column("amount", MONEY, "cash moved: buy: staked (fee included); sell: net proceeds; settle: payout"),
        Column(
            "price", pl.Float64(), "price of the side at the fill (settle: payout per share)", nullable=True
        ),
        Column("shares", MONEY, "shares bought, sold or settled"),
        Column("max_bet", MONEY, "buy only: max bet at the start of its decision", nullable=True),
        Column("cash_at_start", MONEY, "buy only: cash at the start of its decision", nullable=True),
        Column("realized_pnl", MONEY, "P/L realised by a sell or settlement, fees included (0 for buys)"),
        Column("filled_at", TIME, "when the fill executed"),
    ),
    (
        Check("kind", pl.col("kind").is_in(FILL_KINDS), "one of buy, sell, settle"),
        non_negative("amount"),
        non_negative("shares"),
        Check(
            "price",
            pl.col("kind").is_in([BUY, SELL]).not_() | pl.col("price").is_not_null(),
            "set on a buy/sell",
        ),
        Check("max_bet", (pl.col("kind") != BUY) | (pl.col("max_bet") > 0), "positive on a buy"),
        Check(
            "cash_at_start",
            (pl.col("kind") != BUY) | (pl.col("cash_at_start") >= pl.col("amount")).fill_null(False),
            "set and at least the amount on a buy (a decision's bets never exceed its cash)",
        ),
        Check(
            "amount",
            (pl.col("kind") != BUY) | ((pl.col("amount") > 0) & (pl.col("amount") <= pl.col("max_bet"))),
            "in (0, max_bet] on a buy (implied confidence at most 100%)",
        ),
        Check("price", (pl.col("kind") != BUY) | pl.col("price").is_between(0.0, 1.0, "none"), "in (0, 1)"),
    ),
    time_column="filled_at",
)

RESOLUTIONS = FrameSpec(
    "resolutions",
    "How each resolved market ended. ``winner`` names the winning outcome (YES/NO/OUTCOME kinds).",
    (
        Column("market_id", pl.String(), "arena market id"),
        Column("kind", pl.String(), "YES, NO, VOID, 5050 or OUTCOME"),
        Column("winner", pl.String(), "winning outcome; null for VOID and 5050", nullable=True),
        Column("resolved_at", TIME, "when the resolution became known"),
    ),
    (
        Check("kind", pl.col("kind").is_in(RESOLUTION_KINDS), "one of YES, NO, VOID, 5050, OUTCOME"),
        Check(
            "winner",
            pl.when(pl.col("kind").is_in(["VOID", "5050"]))
            .then(pl.col("winner").is_null())
            .when(pl.col("kind") == "OUTCOME")
            .then(pl.col("winner").is_not_null())
            .otherwise(pl.col("winner") == pl.col("kind")),
            "the kind for YES/NO, an outcome for OUTCOME, null for VOID/5050",
        ),
    ),
    time_column="resolved_at",
    unique=("market_id",),
)

PRICES = FrameSpec(
    "prices",
    "Observed price of an outcome over time (binary markets: the YES outcome is enough).",
    (
        Column("market_id", pl.String(), "arena market id"),
        Column("outcome", pl.String(), "outcome the price is for"),
        Column("observed_at", TIME, "when the price became known"),
        Column("price", pl.Float64(), "probability price in [0, 1]"),
    ),
    (in_unit_interval("price"),),
    time_column="observed_at",
    unique=("market_id", "outcome", "observed_at"),
)

FORECASTS = FrameSpec(
    "forecasts",
    "Stated probabilities. Binary markets are stated on YES (a NO statement q is stored as YES 1 − q).",
    (
        Column("cohort_id", pl.String(), "cohort of the agent"),
        Column("agent", pl.String(), "agent name"),
        Column("market_id", pl.String(), "arena market id"),
        Column("outcome", pl.String(), "outcome the probability is for"),
        Column("p", pl.Float64(), "stated probability that the outcome wins"),
        Column("stated_at", TIME, "time of the decision that stated it"),
    ),
    (in_unit_interval("p"),),
    time_column="stated_at",
    unique=("cohort_id", "agent", "market_id", "outcome", "stated_at"),
)

SNAPSHOTS = FrameSpec(
    "snapshots",
    "Portfolio marks: the engine's valuation of each agent over time.",
    (
        Column("cohort_id", pl.String(), "cohort of the agent"),
        Column("agent", pl.String(), "agent name"),
        Column("marked_at", TIME, "time of the mark"),
        Column("cash", MONEY, "cash balance"),
        Column("total_value", MONEY, "cash + value of open positions"),
        Column("realized_pnl", MONEY, "realised P/L to date"),
        Column("unrealized_pnl", MONEY, "open positions' value − their cost basis"),
    ),
    (non_negative("cash"), non_negative("total_value")),
    time_column="marked_at",
    unique=("cohort_id", "agent", "marked_at"),
)

LISTINGS = FrameSpec(
    "listings",
    "When each market was first offered to a cohort: the start of its open time for coverage.",
    (
        Column("cohort_id", pl.String(), "cohort the market was offered to"),
        Column("market_id", pl.String(), "arena market id"),
        Column("listed_at", TIME, "time of the cohort's first round whose snapshot held the market"),
    ),
    time_column="listed_at",
    unique=("cohort_id", "market_id"),
)

TOURNAMENTS = FrameSpec(
    "tournaments",
    "Each cohort's [tournament] settings (the Metaculus tournament rules); a cohort without a row "
    "scores with the defaults.",
    (
        Column("cohort_id", pl.String(), "cohort"),
        Column("prize_pool", MONEY, "dollars split by take"),
        Column("reference", pl.String(), "market or cohort_median: what m is in log(f/m)"),
        Column("s_weight", pl.Float64(), "share of a question's score decided in its hidden period"),
        Column("c_weight", pl.Float64(), "share of a question's coverage decided in its hidden period"),
    ),
    (
        Check("prize_pool", pl.col("prize_pool") > 0, "positive"),
        Check("reference", pl.col("reference").is_in(["market", "cohort_median"]), "market or cohort_median"),
        in_unit_interval("s_weight"),
        in_unit_interval("c_weight"),
    ),
    unique=("cohort_id",),
)

WINDOWS = FrameSpec(
    "windows",
    "Each question's scoring window in a cohort: first offered, end of the hidden period, close.",
    (
        Column("cohort_id", pl.String(), "cohort the market was offered to"),
        Column("market_id", pl.String(), "arena market id"),
        Column("opens_at", TIME, "the cohort's first round that offered the market"),
        Column("hidden_until", TIME, "end of the period its price was hidden (= opens_at: never)"),
        Column("closes_at", TIME, "the market's close or the cohort's end, whichever is first"),
    ),
    (
        Check(
            "hidden_until",
            pl.col("hidden_until").is_between(pl.col("opens_at"), pl.col("closes_at")),
            "within the window",
        ),
    ),
    unique=("cohort_id", "market_id"),
)

DECISIONS = FrameSpec(
    "decisions",
    "One row per agent decision, with its cost. ``error_kind`` null means a valid response.",
    (
        Column("cohort_id", pl.String(), "cohort of the agent"),
        Column("agent", pl.String(), "agent name"),
        Column("decided_at", TIME, "round time of the decision"),
        Column("error_kind", pl.String(), "why the response was invalid; null when valid", nullable=True),
        Column("tokens", pl.Int64(), "prompt + completion tokens over all attempts"),
        Column("cost", COST, "provider cost in dollars over all attempts"),
        Column("latency_s", pl.Float64(), "wall time of the decision in seconds"),
    ),
    (non_negative("tokens"), non_negative("cost"), non_negative("latency_s")),
    time_column="decided_at",
)

OFFERS = FrameSpec(
    "offers",
    "Every (round, market outcome) a cohort offered, with its price and whether agents were shown it: "
    "what imputation scores (binary markets: the YES outcome only).",
    (
        Column("cohort_id", pl.String(), "cohort the market was offered to"),
        Column("market_id", pl.String(), "arena market id"),
        Column("outcome", pl.String(), "outcome the price is for"),
        Column("offered_at", TIME, "time of the round (the decisions' ``decided_at``)"),
        Column("price", pl.Float64(), "the outcome's price in the round's snapshot"),
        Column(
            "shown",
            pl.Boolean(),
            "agents saw the price (false: hidden, by the cohort's price_visibility or the market's "
            "tournament hidden period)",
        ),
    ),
    (in_unit_interval("price"),),
    time_column="offered_at",
    unique=("cohort_id", "market_id", "outcome", "offered_at"),
)

GUARDS = FrameSpec(
    "guards",
    "Per LLM seat, its knowledge cutoff and whether the leakage guard covered it (the Autocast "
    "competition rules).",
    (
        Column("cohort_id", pl.String(), "cohort of the agent"),
        Column("agent", pl.String(), "agent name"),
        Column(
            "knowledge_ends", TIME, "end of the agent's knowledge_cutoff day; null if none", nullable=True
        ),
        Column("leakage_guard", pl.String(), "on, or off for a replay seat without a knowledge_cutoff"),
    ),
    (Check("leakage_guard", pl.col("leakage_guard").is_in(["on", "off"]), "on or off"),),
    unique=("cohort_id", "agent"),
)

SPECS: tuple[FrameSpec, ...] = (
    *(AGENTS, FILLS, RESOLUTIONS, PRICES, FORECASTS, SNAPSHOTS, DECISIONS, LISTINGS),
    *(OFFERS, GUARDS, TOURNAMENTS, WINDOWS),
)


@dataclass(frozen=True)
class ScoringFrames:
    """Everything scoring reads. Build with ``ScoringFrames.of(...)`` so every frame is checked."""

    agents: pl.DataFrame
    fills: pl.DataFrame
    resolutions: pl.DataFrame
    prices: pl.DataFrame
    forecasts: pl.DataFrame
    snapshots: pl.DataFrame
    decisions: pl.DataFrame
    listings: pl.DataFrame
    offers: pl.DataFrame
    guards: pl.DataFrame
    tournaments: pl.DataFrame
    windows: pl.DataFrame

    @classmethod
    def of(cls, **frames: pl.DataFrame) -> ScoringFrames:
        """Conform each given frame to its spec; frames not given are empty."""
        unknown = set(frames) - {s.name for s in SPECS}
        if unknown:
            raise FrameError(f"unknown scoring frame(s): {', '.join(sorted(unknown))}")
        built = {s.name: s.conform(frames[s.name]) if s.name in frames else s.empty() for s in SPECS}
        result = cls(**built)
        result._check_roster()
        return result

    def _check_roster(self) -> None:
        """Every seat named in a per-seat frame is in ``agents``: one lazy query over the five frames,
        whose first stray (in frame order, then by cohort and agent) names the error."""
        specs = (FILLS, FORECASTS, SNAPSHOTS, DECISIONS, GUARDS)
        named = pl.concat(
            getattr(self, spec.name).lazy().select(pl.lit(i, pl.Int64).alias("_spec"), "cohort_id", "agent")
            for i, spec in enumerate(specs)
        )
        stray = (
            named.join(self.agents.lazy(), on=["cohort_id", "agent"], how="anti")
            .sort("_spec", "cohort_id", "agent")
            .head(1)
            .collect()
        )
        if len(stray):
            spec, cohort, agent = stray.row(0)
            raise FrameError(f"{specs[spec].name}: agent {agent!r} of cohort {cohort!r} is not in agents")

    def cohorts(self, cohort_ids: list[str]) -> ScoringFrames:
        """Only the given cohorts' agents and their rows (markets, prices and resolutions stay whole)."""
        keep = pl.col("cohort_id").is_in(cohort_ids)
        return replace(
            self,
            **{s.name: getattr(self, s.name).filter(keep) for s in SPECS if "cohort_id" in s.schema},
        )

    def as_of(self, when: datetime) -> ScoringFrames:
        """What was known at ``when``: every row stamped later is dropped (point-in-time scoring)."""
        when = ensure_utc(when)
        return replace(
            self,
            **{
                s.name: getattr(self, s.name).filter(pl.col(s.time_column) <= when)
                for s in SPECS
                if s.time_column
            },
        )
