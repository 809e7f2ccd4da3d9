"""What there is to look at: cohorts, markets and their prices, and how fresh the data is.

Read-only queries for browsing (the dashboard's pickers and market pages). Like
``arena.reports.log_tables`` they return polars frames in a fixed order and compute nothing that
scoring owns.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl
from sqlalchemy import CompoundSelect, Select, func, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import TableClause

from arena.db.columnar import read_frame
from arena.db.read_tables import (
    agent,
    cohort,
    decision,
    fill,
    market,
    market_snapshot,
    portfolio_snapshot,
    resolution,
    round_,
    round_market,
)
from arena.db.statuses import FINISHED_ROUND_STATUSES
from arena.scoring.load.markets import ROUND_SOURCE

ACTIVE = ("pending", "running")


def cohorts(connection: Connection) -> pl.DataFrame:
    """Every cohort, newest first, with its agent count and finished rounds."""
    agents = select(agent.c.cohort_id, func.count().label("agents")).group_by(agent.c.cohort_id).subquery()
    done = (
        select(round_.c.cohort_id, func.count().label("rounds_done"))
        .where(round_.c.status.in_(FINISHED_ROUND_STATUSES))
        .group_by(round_.c.cohort_id)
        .subquery()
    )
    query: Select[*tuple[Any, ...]] = (
        select(
            cohort.c.id.label("cohort_id"),
            cohort.c.name,
            cohort.c.mode,
            cohort.c.status,
            cohort.c.seed,
            cohort.c.config_hash,
            cohort.c.created_at,
            cohort.c.started_at,
            cohort.c.finished_at,
            func.coalesce(agents.c.agents, 0).label("agents"),
            func.coalesce(done.c.rounds_done, 0).label("rounds_done"),
        )
        .outerjoin(agents, agents.c.cohort_id == cohort.c.id)
        .outerjoin(done, done.c.cohort_id == cohort.c.id)
    )
    return read_frame(connection, query).sort(["created_at", "cohort_id"], descending=True)


def live_cohorts(frame: pl.DataFrame) -> list[str]:
    """Ids of live cohorts still running: the dashboard refreshes itself while there are any."""
    return frame.filter((pl.col("mode") == "live") & pl.col("status").is_in(ACTIVE))["cohort_id"].to_list()


def cohort_config(connection: Connection, cohort_id: str) -> dict[str, object]:
    """The frozen config of a cohort (parsed JSON)."""
    text = read_frame(connection, select(cohort.c.config_json).where(cohort.c.id == cohort_id))
    return dict(json.loads(text["config_json"][0])) if len(text) else {}


def data_version(connection: Connection) -> tuple[object, ...]:
    """A cheap fingerprint of everything the dashboard shows. It changes whenever a row is added or
    a decision, round or cohort changes status, so views cached on it are never stale and are not
    recomputed while nothing happens."""
    newest = [
        select(func.max(model.c.id)).scalar_subquery()
        for model in (decision, fill, portfolio_snapshot, resolution, market_snapshot, round_)
    ]
    decided = select(func.count()).where(decision.c.decided_at.is_not(None)).scalar_subquery()
    closed = select(func.count()).where(round_.c.status.in_(FINISHED_ROUND_STATUSES)).scalar_subquery()
    counts = connection.execute(select(*newest, decided, closed)).one()
    statuses = connection.execute(select(cohort.c.id, cohort.c.status).order_by(cohort.c.id)).all()
    return (*counts, *(tuple(row) for row in statuses))


def market_description(connection: Connection, market_id: str) -> str:
    """The market's description as its venue wrote it ("" when it has none or is unknown)."""
    found = connection.execute(select(market.c.description).where(market.c.id == market_id))
    return str(found.scalar() or "")


def markets(connection: Connection, cohort_id: str | None = None) -> pl.DataFrame:
    """Markets (all, or those a cohort offered or traded) with their resolution and latest price."""
    query: Select[*tuple[Any, ...]] = select(
        market.c.id.label("market_id"),
        market.c.venue,
        market.c.question,
        market.c.category,
        market.c.outcomes_json,
        market.c.volume,
        market.c.close_time,
        market.c.url,
        resolution.c.kind.label("resolution"),
        resolution.c.resolved_at,
    ).outerjoin(resolution, resolution.c.market_id == market.c.id)
    if cohort_id is not None:
        query = query.where(market.c.id.in_(cohort_market_ids(cohort_id)))
    table = read_frame(connection, query)
    return table.join(_latest_prices(connection), on="market_id", how="left").sort("market_id")


def cohort_market_ids(cohort_id: str) -> CompoundSelect[str]:
    """Ids of the markets a cohort offered in a round or traded (a market may be traded after it
    left the offered universe, e.g. sold while closing)."""
    offered = (
        select(round_market.c.market_id)
        .join(round_, round_.c.id == round_market.c.round_id)
        .where(round_.c.cohort_id == cohort_id)
    )
    traded = (
        select(fill.c.market_id)
        .join(agent, agent.c.id == fill.c.agent_id)
        .where(agent.c.cohort_id == cohort_id)
    )
    return offered.union(traded)


def _latest_prices(connection: Connection) -> pl.DataFrame:
    """Latest observed YES price per market, from synced snapshots and the prices rounds showed."""
    latest = [_latest(connection, market_snapshot), _latest(connection, round_market)]
    frame = pl.concat(latest).sort("market_id", "last_price_at", "round").unique("market_id", keep="last")
    return frame.select("market_id", "last_price_at", last_price=_yes_price(pl.col("prices_json")))


def _latest(connection: Connection, model: TableClause) -> pl.DataFrame:
    newest = (
        select(model.c.market_id, func.max(model.c.observed_at).label("observed_at"))
        .group_by(model.c.market_id)
        .subquery()
    )
    query: Select[*tuple[Any, ...]] = select(
        model.c.market_id, model.c.observed_at.label("last_price_at"), model.c.prices_json
    ).join(
        newest,
        (newest.c.market_id == model.c.market_id) & (newest.c.observed_at == model.c.observed_at),
    )
    frame = read_frame(connection, query).unique("market_id", keep="first", maintain_order=True)
    return frame.with_columns(round=pl.lit(model is round_market))


def price_history(connection: Connection, market_id: str) -> pl.DataFrame:
    """Every observed YES price of a market, oldest first: synced snapshots and the prices rounds
    showed (source ``round``). At one instant the round's price wins (it is what agents saw), as
    in ``arena.scoring.load.database``."""
    synced = select(
        market_snapshot.c.observed_at, market_snapshot.c.source, market_snapshot.c.prices_json
    ).where(market_snapshot.c.market_id == market_id)
    shown = select(round_market.c.observed_at, round_market.c.prices_json).where(
        round_market.c.market_id == market_id
    )
    rounds = (
        read_frame(connection, shown)
        .with_columns(source=pl.lit(ROUND_SOURCE))
        .select("observed_at", "source", "prices_json")
    )
    frame = pl.concat([rounds, read_frame(connection, synced).sort("source")])
    frame = frame.unique("observed_at", keep="first", maintain_order=True).sort("observed_at")
    return frame.select("observed_at", "source", price=_yes_price(pl.col("prices_json"))).drop_nulls("price")


def _yes_price(prices_json: pl.Expr) -> pl.Expr:
    """The YES price from a stored prices document, or 1 − NO when only NO is given."""
    yes = prices_json.str.json_path_match("$.YES").cast(pl.Float64)
    no = prices_json.str.json_path_match("$.NO").cast(pl.Float64)
    return yes.fill_null(1.0 - no)
