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
from sqlmodel import col

from arena.db.columnar import read_frame
from arena.db.models import (
    FINISHED_ROUND_STATUSES,
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    MarketRow,
    MarketSnapshotRow,
    PortfolioSnapshotRow,
    ResolutionRow,
    RoundMarketRow,
    RoundRow,
)
from arena.scoring.load.markets import ROUND_SOURCE

ACTIVE = ("pending", "running")


def cohorts(connection: Connection) -> pl.DataFrame:
    """Every cohort, newest first, with its agent count and finished rounds."""
    agents = (
        select(col(AgentRow.cohort_id), func.count().label("agents"))
        .group_by(col(AgentRow.cohort_id))
        .subquery()
    )
    done = (
        select(col(RoundRow.cohort_id), func.count().label("rounds_done"))
        .where(col(RoundRow.status).in_(FINISHED_ROUND_STATUSES))
        .group_by(col(RoundRow.cohort_id))
        .subquery()
    )
    query: Select[*tuple[Any, ...]] = (
        select(
            col(CohortRow.id).label("cohort_id"),
            col(CohortRow.name),
            col(CohortRow.mode),
            col(CohortRow.status),
            col(CohortRow.seed),
            col(CohortRow.config_hash),
            col(CohortRow.created_at),
            col(CohortRow.started_at),
            col(CohortRow.finished_at),
            func.coalesce(agents.c.agents, 0).label("agents"),
            func.coalesce(done.c.rounds_done, 0).label("rounds_done"),
        )
        .outerjoin(agents, agents.c.cohort_id == col(CohortRow.id))
        .outerjoin(done, done.c.cohort_id == col(CohortRow.id))
    )
    return read_frame(connection, query).sort(["created_at", "cohort_id"], descending=True)


def live_cohorts(frame: pl.DataFrame) -> list[str]:
    """Ids of live cohorts still running: the dashboard refreshes itself while there are any."""
    return frame.filter((pl.col("mode") == "live") & pl.col("status").is_in(ACTIVE))["cohort_id"].to_list()


def cohort_config(connection: Connection, cohort_id: str) -> dict[str, object]:
    """The frozen config of a cohort (parsed JSON)."""
    text = read_frame(connection, select(col(CohortRow.config_json)).where(col(CohortRow.id) == cohort_id))
    return dict(json.loads(text["config_json"][0])) if len(text) else {}


def data_version(connection: Connection) -> tuple[object, ...]:
    """A cheap fingerprint of everything the dashboard shows. It changes whenever a row is added or
    a decision, round or cohort changes status, so views cached on it are never stale and are not
    recomputed while nothing happens."""
    newest = [
        select(func.max(col(model.id))).scalar_subquery()
        for model in (DecisionRow, FillRow, PortfolioSnapshotRow, ResolutionRow, MarketSnapshotRow, RoundRow)
    ]
    decided = select(func.count()).where(col(DecisionRow.decided_at).is_not(None)).scalar_subquery()
    closed = select(func.count()).where(col(RoundRow.status).in_(FINISHED_ROUND_STATUSES)).scalar_subquery()
    counts = connection.execute(select(*newest, decided, closed)).one()
    statuses = connection.execute(
        select(col(CohortRow.id), col(CohortRow.status)).order_by(col(CohortRow.id))
    ).all()
    return (*counts, *(tuple(row) for row in statuses))


def market_description(connection: Connection, market_id: str) -> str:
    """The market's description as its venue wrote it ("" when it has none or is unknown)."""
    found = connection.execute(select(col(MarketRow.description)).where(col(MarketRow.id) == market_id))
    return str(found.scalar() or "")


def markets(connection: Connection, cohort_id: str | None = None) -> pl.DataFrame:
    """Markets (all, or those a cohort offered or traded) with their resolution and latest price."""
    query: Select[*tuple[Any, ...]] = select(
        col(MarketRow.id).label("market_id"),
        col(MarketRow.venue),
        col(MarketRow.question),
        col(MarketRow.category),
        col(MarketRow.outcomes_json),
        col(MarketRow.volume),
        col(MarketRow.close_time),
        col(MarketRow.url),
        col(ResolutionRow.kind).label("resolution"),
        col(ResolutionRow.resolved_at),
    ).outerjoin(ResolutionRow, col(ResolutionRow.market_id) == col(MarketRow.id))
    if cohort_id is not None:
        query = query.where(col(MarketRow.id).in_(cohort_market_ids(cohort_id)))
    table = read_frame(connection, query)
    return table.join(_latest_prices(connection), on="market_id", how="left").sort("market_id")


def cohort_market_ids(cohort_id: str) -> CompoundSelect[str]:
    """Ids of the markets a cohort offered in a round or traded (a market may be traded after it
    left the offered universe, e.g. sold while closing)."""
    offered = (
        select(col(RoundMarketRow.market_id))
        .join(RoundRow, col(RoundRow.id) == col(RoundMarketRow.round_id))
        .where(col(RoundRow.cohort_id) == cohort_id)
    )
    traded = (
        select(col(FillRow.market_id))
        .join(AgentRow, col(AgentRow.id) == col(FillRow.agent_id))
        .where(col(AgentRow.cohort_id) == cohort_id)
    )
    return offered.union(traded)


def _latest_prices(connection: Connection) -> pl.DataFrame:
    """Latest observed YES price per market, from synced snapshots and the prices rounds showed."""
    latest = [_latest(connection, MarketSnapshotRow), _latest(connection, RoundMarketRow)]
    frame = pl.concat(latest).sort("market_id", "last_price_at", "round").unique("market_id", keep="last")
    return frame.select("market_id", "last_price_at", last_price=_yes_price(pl.col("prices_json")))


def _latest(connection: Connection, model: type[MarketSnapshotRow] | type[RoundMarketRow]) -> pl.DataFrame:
    newest = (
        select(col(model.market_id), func.max(col(model.observed_at)).label("observed_at"))
        .group_by(col(model.market_id))
        .subquery()
    )
    query: Select[*tuple[Any, ...]] = select(
        col(model.market_id), col(model.observed_at).label("last_price_at"), col(model.prices_json)
    ).join(
        newest,
        (newest.c.market_id == col(model.market_id)) & (newest.c.observed_at == col(model.observed_at)),
    )
    frame = read_frame(connection, query).unique("market_id", keep="first", maintain_order=True)
    return frame.with_columns(round=pl.lit(model is RoundMarketRow))


def price_history(connection: Connection, market_id: str) -> pl.DataFrame:
    """Every observed YES price of a market, oldest first: synced snapshots and the prices rounds
    showed (source ``round``). At one instant the round's price wins (it is what agents saw), as
    in ``arena.scoring.load.database``."""
    synced = select(
        col(MarketSnapshotRow.observed_at), col(MarketSnapshotRow.source), col(MarketSnapshotRow.prices_json)
    ).where(col(MarketSnapshotRow.market_id) == market_id)
    shown = select(col(RoundMarketRow.observed_at), col(RoundMarketRow.prices_json)).where(
        col(RoundMarketRow.market_id) == market_id
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
