"""A live cohort's world for tests: markets stored as ``arena markets sync`` stores them, a live
cohort launched on them at a chosen start, and a scripted agent's bets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db.engine import session_scope
from arena.db.market_rows import (
    market_row,
    resolution_row,
    snapshot_row,
    write_markets,
    write_resolutions,
    write_snapshots,
)
from arena.db.market_source import DbMarketSource
from markets.polymarket.clob import CLOB_MID_SOURCE
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue


def store_market(
    engine: Engine, market_id: str, close: datetime, prices: Sequence[tuple[datetime, str]]
) -> None:
    """A Polymarket market (``polymarket:ID``) closing at ``close``, with a CLOB mid snapshot of
    each (time, YES price) in ``prices``."""
    market = Market(Venue.POLYMARKET, market_id.split(":")[1], f"{market_id}?", close_time=close)
    snaps = [
        PriceSnapshot(market_id, {"YES": Decimal(p), "NO": 1 - Decimal(p)}, at, CLOB_MID_SOURCE)
        for at, p in prices
    ]
    with session_scope(engine) as session:
        write_markets(session, [market_row(market, {}, prices[0][0])])
        write_snapshots(session, [snapshot_row(s, None) for s in snaps])


def resolve(engine: Engine, market_id: str, kind: ResolutionKind, at: datetime) -> None:
    """The venue's resolution of ``market_id`` at ``at``, as the sync stores it."""
    with session_scope(engine) as session:
        write_resolutions(
            session, [resolution_row(Resolution.binary(market_id, kind, at, "polymarket"), at, None)]
        )


def scripted_bets(path: Path, *bets: tuple[datetime, str, int]) -> dict[str, Any]:
    """An agent ``alice`` that bets on YES: (time, market id, amount) each."""
    lines = [
        {"time": at.isoformat(), "market_id": m, "outcome": "YES", "amount": amount} for at, m, amount in bets
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return {"name": "alice", "kind": "scripted", "path": str(path)}


def launch_live(
    engine: Engine,
    start: datetime,
    agents: Sequence[dict[str, Any]],
    *,
    name: str = "live",
    every: str = "1d",
    rounds: int = 2,
    **extra: Any,
) -> str:
    """A live Polymarket cohort starting at ``start`` (launched an hour before), on the stored markets."""
    config = parse_config(
        {
            "name": name,
            "mode": "live",
            "venue": "polymarket",
            "start": start,
            "schedule": {"every": every, "rounds": rounds},
            "agents": list(agents),
            **extra,
        }
    )
    clock = SimulatedClock(start - timedelta(hours=1))
    return launch(engine, config, source=DbMarketSource(engine), environ={}, clock=clock).cohort_id
