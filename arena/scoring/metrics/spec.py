"""What a leaderboard metric is: how it is computed (a ``Ratio`` of row-wise sums, a per-agent
function or a derived expression), how it is shown and which way is better.

The metrics themselves are declared in ``arena.scoring.metrics.registry``; this module holds only the
shapes they are declared in, so the code that computes or shows any metric (intervals, ranking,
reports, dashboard) depends on the shapes, not on the list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import polars as pl

from arena.scoring.load.frames import Reading
from arena.scoring.metrics.inputs import Inputs
from arena.scoring.rules.difficulty import Panel

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
    """Return %: its interval resamples P/L attributed to markets (``arena.scoring.rules.pnl.market_pnl``)."""


@dataclass(frozen=True)
class FixedEffects:
    """A difficulty-adjusted Brier: its interval refits the panel's fixed effects on each bootstrap
    replicate (``arena.scoring.rules.difficulty``); ``panel`` is ``stated`` or a bet reading."""

    panel: Panel


@dataclass(frozen=True)
class Metric:
    """One leaderboard metric. Exactly one of ``ratio``, ``per_agent`` and ``derive`` computes it.

    ``better``: the direction ("higher" or "lower" is better; None: not a ranking). ``interval``
    adds ``<key>_lo``/``<key>_hi`` (bootstrap over markets); ``compared`` adds the comparison with
    the leader ``vs_leader_<key>_*``; ``flagged_by`` names the metric whose common resolved
    markets judge whether that comparison rests on too few markets. ``headline`` metrics are the
    compact leaderboards' columns. ``reading`` marks a bet-implied metric's reading.
    ``demoted_by`` names flag metrics that say this one cannot be read as skill for an agent
    (a reading contradicting its bets, selective statements, a hidden price seen): sorted by
    this metric, an agent carrying any of them ranks below every agent carrying none.
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
    demoted_by: tuple[str, ...] = ()
    reference: float | None = None  # a chart's reference line: 0.25 for Brier, 0 for skills
    ratio: Ratio | None = None
    per_agent: PerAgent | None = None
    derive: Derive | None = None
    bootstrap: MarketPnl | FixedEffects | None = None

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
