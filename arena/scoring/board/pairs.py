"""Two agents side by side: their paired comparison, and what each did on the markets it bet on.

``paired_comparison`` is the leaderboard's own comparison with the leader (``arena.scoring.
intervals``: the same market-clustered bootstrap, paired on the markets both took part in) run
on a roster of just the two agents, then turned so it always reads "first − second". Nothing is
recomputed by other rules: the figures are exactly what the leaderboard would say if these two
were the only agents.

``market_stances`` says, per agent and market it bet on, which side it backed with most money,
what it staked, the probability of YES it last stated, how the market ended, whether its side
won and its P/L there (``arena.scoring.rules.pnl.market_pnl``, exact). ``head_to_head`` keeps the
markets both agents bet on and names who was right.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import polars as pl

from arena.cohorts.seats import replicated_agent
from arena.scoring.board.ranking import MIN_MARKETS, leaderboard
from arena.scoring.load.frames import BUY, SPECS, ScoringFrames
from arena.scoring.metrics.registry import COMPARED, COMPARISON_FIELDS
from arena.scoring.rules.bets import DECISIVE
from arena.scoring.rules.pnl import SEAT, market_pnl
from arena.scoring.rules.scores import YES
from arena.scoring.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_REPLICATES


def only_agents(frames: ScoringFrames, agents: list[str]) -> ScoringFrames:
    """The frames with only ``agents``' seats and rows (markets, prices and resolutions stay whole)."""
    keep = pl.col("agent").is_in(agents)
    return replace(
        frames, **{s.name: getattr(frames, s.name).filter(keep) for s in SPECS if "agent" in s.schema}
    )


def paired_comparison(
    frames: ScoringFrames,
    first: str,
    second: str,
    *,
    seed: int,
    replicates: int = DEFAULT_REPLICATES,
    level: float = DEFAULT_LEVEL,
    min_markets: int = MIN_MARKETS,
) -> pl.DataFrame:
    """One row per compared metric (``registry.COMPARED``): ``metric``, ``first``/``second`` (each
        agent's value), ``diff`` = first − second with its interval ``diff_lo``/``diff_hi``,
        ``p_value`` and ``p_value_reason`` (why there is none), ``share_better`` (share of common
        markets where *first* did strictly better), ``wins``/``ties``/``losses`` (of *first*),
        ``common_markets`` and ``few_markets`` (fewer common resolved markets than ``min_markets``). An
    agent seated as replicates (``kelly#1`` …) is named as one (``kelly``): the mean of its copies.
    Raises ``ValueError`` naming an agent not in ``frames``."""
    if first == second:
        raise ValueError(f"compare two different agents, not {first!r} with itself")
    seats = frames.agents["agent"].to_list()
    chosen = []
    for name in (first, second):
        own = [seat for seat in seats if name in (seat, replicated_agent(seat))]
        if not own:
            raise ValueError(f"agent {name!r} is not in these cohorts")
        chosen += own
    table = leaderboard(
        only_agents(frames, chosen), seed=seed, replicates=replicates, level=level, min_markets=min_markets
    )
    leader, other = table.row(0, named=True), table.row(1, named=True)
    flip = leader["agent"] == first  # the table says other − leader; we want first − second
    rows = []
    for key in COMPARED:
        field = {f: other[f"vs_leader_{key}_{f}"] for f in COMPARISON_FIELDS}
        if flip:
            field |= _turned(field)
        values = {row["agent"]: row[key] for row in (leader, other)}
        rows.append({"metric": key, "first": values[first], "second": values[second], **field})
    return pl.DataFrame(rows, schema=_SCHEMA)


_SCHEMA: dict[str, pl.DataType] = {
    "metric": pl.String(),
    **{c: pl.Float64() for c in ("first", "second", "diff", "diff_lo", "diff_hi", "p_value")},
    "p_value_reason": pl.String(),
    "share_better": pl.Float64(),
    **{c: pl.Int64() for c in ("wins", "ties", "losses", "common_markets")},
    "few_markets": pl.Boolean(),
}


def _turned(field: dict[str, Any]) -> dict[str, Any]:
    """A comparison "other − leader" read from the leader's side: differences negated (the
    interval's ends swap), wins and losses swap, the share better is the other's losses."""
    diff, lo, hi = field["diff"], field["diff_lo"], field["diff_hi"]
    wins, losses, common = field["wins"], field["losses"], field["common_markets"]
    return {
        "diff": None if diff is None else -diff,
        "diff_lo": None if hi is None else -hi,
        "diff_hi": None if lo is None else -lo,
        "wins": losses,
        "losses": wins,
        "share_better": None if losses is None or not common else losses / common,
    }


def market_stances(frames: ScoringFrames) -> pl.DataFrame:
    """Per (cohort, agent, market) bet on: ``side`` (the outcome it staked most on; ties by name),
    ``sides`` (every outcome it bought, e.g. ``NO+YES``), ``staked`` (Decimal), ``stated_yes``
    (its latest stated P(YES), null if it stated none), ``resolution``, ``winner``, ``right``
    (its side won; null unless decisively resolved) and ``pnl`` (exact, open sides at their mark)."""
    per_side = (
        frames.fills.filter(pl.col("kind") == BUY)
        .group_by([*SEAT, "market_id", "outcome"])
        .agg(staked=pl.col("amount").sum())
        .sort([*SEAT, "market_id", "staked", "outcome"], descending=[False, False, False, True, False])
    )
    stances = per_side.group_by([*SEAT, "market_id"], maintain_order=True).agg(
        side=pl.col("outcome").first(),
        sides=pl.col("outcome").sort().str.join("+"),
        staked=pl.col("staked").sum(),
    )
    stated = (
        frames.forecasts.filter(pl.col("outcome") == YES)
        .sort("stated_at")
        .group_by([*SEAT, "market_id"])
        .agg(stated_yes=pl.col("p").last())
    )
    ended = frames.resolutions.select("market_id", "winner", resolution="kind")
    right = pl.when(pl.col("resolution").is_in(DECISIVE)).then(pl.col("side") == pl.col("winner"))
    return (
        stances.join(stated, on=[*SEAT, "market_id"], how="left", maintain_order="left")
        .join(ended, on="market_id", how="left", maintain_order="left")
        .join(market_pnl(frames), on=[*SEAT, "market_id"], how="left", maintain_order="left")
        .with_columns(right=right)
        .sort([*SEAT, "market_id"])
    )


def head_to_head(stances: pl.DataFrame, first: str, second: str) -> pl.DataFrame:
    """The markets both agents bet on (one cohort's stances), one row each: ``market_id``, each
    agent's columns suffixed ``_first``/``_second``, ``resolution`` and ``who_was_right``: the
    agent's name, ``both``, ``neither``, or ``open`` / ``void`` / ``50-50`` when nobody could be."""
    columns = ["market_id", "side", "sides", "staked", "stated_yes", "right", "pnl"]
    a = stances.filter(pl.col("agent") == first).select(columns)
    b = stances.filter(pl.col("agent") == second).select(columns)
    ended = stances.select("market_id", "resolution").unique("market_id")
    pairs = a.join(b, on="market_id", how="inner", suffix="_second").rename(
        {c: f"{c}_first" for c in columns[1:]}
    )
    a_right, b_right = pl.col("right_first"), pl.col("right_second")
    who = (
        pl.when(pl.col("resolution").is_null())
        .then(pl.lit("open"))
        .when(pl.col("resolution") == "VOID")
        .then(pl.lit("void"))
        .when(pl.col("resolution") == "5050")
        .then(pl.lit("50-50"))
        .when(a_right & b_right)
        .then(pl.lit("both"))
        .when(a_right)
        .then(pl.lit(first))
        .when(b_right)
        .then(pl.lit(second))
        .otherwise(pl.lit("neither"))
    )
    return pairs.join(ended, on="market_id", how="left").with_columns(who_was_right=who).sort("market_id")
