"""Market-side scoring frames: which markets are binary, resolutions with their winner, prices.

- Binary markets keep the YES price (NO is 1 − YES, as fills use it); where a source gives only
  NO, YES is 1 − NO. A NO-only statement q on a binary market becomes YES 1 − q.
- Prices are every price the arena observed for the markets involved: recorded market snapshots
  and the prices shown in rounds. Two sources at the same instant: the round's price (what agents
  saw) wins, then sources in name order.
- Resolutions are read with their winner: the outcome paying $1 (``OUTCOME``), the kind itself
  (``YES``/``NO``), none for ``VOID``/``5050``; payouts that disagree are an error.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import polars as pl
from sqlalchemy import select
from sqlalchemy.engine import Connection

from arena.db.read_tables import market, market_snapshot, resolution, round_market
from arena.scoring.load.frames import PRICES, RESOLUTIONS
from arena.scoring.load.rows import LoadError, chunked, frame_of, outcome_prices

BINARY = ["YES", "NO"]
ROUND_SOURCE = "round"


def binary_markets(connection: Connection, market_ids: list[str]) -> set[str]:
    rows = chunked(
        connection,
        market_ids,
        lambda ids: select(market.c.id, market.c.outcomes_json).where(market.c.id.in_(ids)),
    )
    return {r.id for r in rows if list(r.outcomes_json) == BINARY}


def binary_on_yes(forecasts: pl.DataFrame, binary: set[str]) -> pl.DataFrame:
    """Binary statements as YES: the YES value if stated, else 1 − the NO value."""
    on_binary = pl.col("market_id").is_in(list(binary))
    key = ["cohort_id", "agent", "market_id", "stated_at"]
    has_yes = (pl.col("outcome") == "YES").any().over(key)
    keep = ~on_binary | (pl.col("outcome") == "YES") | ((pl.col("outcome") == "NO") & ~has_yes)
    flipped = pl.when(on_binary & (pl.col("outcome") == "NO"))
    return forecasts.filter(keep).with_columns(
        p=flipped.then(1.0 - pl.col("p")).otherwise(pl.col("p")),
        outcome=flipped.then(pl.lit("YES")).otherwise(pl.col("outcome")),
    )


def resolutions(connection: Connection, market_ids: list[str]) -> pl.DataFrame:
    rows = chunked(
        connection,
        market_ids,
        lambda ids: (
            select(
                resolution.c.market_id,
                resolution.c.kind,
                resolution.c.payouts_json,
                resolution.c.resolved_at,
            )
            .where(resolution.c.market_id.in_(ids))
            .order_by(resolution.c.market_id)
        ),
    )
    table = [(r.market_id, r.kind, _winner(r.market_id, r.kind, r.payouts_json), r.resolved_at) for r in rows]
    return frame_of(table, RESOLUTIONS)


def _winner(market_id: str, kind: str, payouts: dict[str, str]) -> str | None:
    """The outcome that won, checked against the payouts (all 0 but the winner's 1)."""
    values = {outcome: Decimal(str(v)) for outcome, v in payouts.items()}
    winners = [o for o, v in values.items() if v == 1]
    if kind in ("VOID", "5050"):
        expected_ok = kind == "VOID" or all(v == Decimal("0.5") for v in values.values())
        winner = None
    else:
        winner = kind if kind in BINARY else (winners[0] if len(winners) == 1 else None)
        expected_ok = winner is not None and winners == [winner] and all(v in (0, 1) for v in values.values())
    if not expected_ok:
        raise LoadError(f"resolution of {market_id!r}: payouts_json {payouts} do not fit kind {kind}")
    return winner


def prices(connection: Connection, market_ids: list[str], binary: set[str]) -> pl.DataFrame:
    snapshots = chunked(
        connection,
        market_ids,
        lambda ids: (
            select(
                market_snapshot.c.market_id,
                market_snapshot.c.source,
                market_snapshot.c.observed_at,
                market_snapshot.c.prices_json,
            )
            .where(market_snapshot.c.market_id.in_(ids))
            .order_by(market_snapshot.c.market_id, market_snapshot.c.observed_at, market_snapshot.c.id)
        ),
    )
    shown = chunked(
        connection,
        market_ids,
        lambda ids: (
            select(round_market.c.market_id, round_market.c.observed_at, round_market.c.prices_json)
            .where(round_market.c.market_id.in_(ids))
            .order_by(round_market.c.market_id, round_market.c.observed_at, round_market.c.round_id)
        ),
    )
    observations = [(r.market_id, ROUND_SOURCE, r.observed_at, r.prices_json) for r in shown]
    observations += sorted(
        ((r.market_id, r.source, r.observed_at, r.prices_json) for r in snapshots), key=lambda r: r[1]
    )
    rows: dict[tuple[str, str, Any], float] = {}
    for market_id, _source, observed_at, prices in observations:
        for outcome, price in outcome_prices(market_id, prices, market_id in binary).items():
            rows.setdefault((market_id, outcome, observed_at), price)
    table = [(m, o, at, p) for (m, o, at), p in rows.items()]
    return frame_of(table, PRICES)
