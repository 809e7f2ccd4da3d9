"""External forecasts: probabilities imported with their own times (``agents.external``).

They join the statements of decisions in the ``forecasts`` frame, so every stated score reads
them by the same rules: a forecast stands from its ``stated_at`` until the forecaster's next one
on the same outcome, or the resolution.
"""

from __future__ import annotations

import polars as pl
from sqlalchemy import select
from sqlalchemy.engine import Connection

from arena.db.columnar import read_frame
from arena.db.read_tables import agent, external_forecast
from arena.scoring.load.frames import FORECASTS


def external_forecasts(connection: Connection, cohort_ids: list[str]) -> pl.DataFrame:
    """The cohorts' external forecasts as rows of the ``forecasts`` frame, in the order stored."""
    row = external_forecast.c
    query = (
        select(
            row.cohort_id,
            agent.c.name.label("agent"),
            row.market_id,
            row.outcome,
            row.p,
            row.stated_at,
        )
        .select_from(external_forecast)
        .join(agent, agent.c.id == row.agent_id)
        .where(row.cohort_id.in_(cohort_ids))
        .order_by(row.id)
    )
    return FORECASTS.conform(read_frame(connection, query))


def with_external(stated: pl.DataFrame, external: pl.DataFrame) -> pl.DataFrame:
    """The decisions' statements followed by the external forecasts, in the ``forecasts`` columns."""
    return pl.concat([FORECASTS.conform(stated), external])
