"""When each market was first offered to a cohort: where its tournament window and coverage start.

Shared by the round runner (which markets are still in their hidden period) and scoring
(listings), and read through ``arena.db.read_tables`` so scoring loads no ORM models for it.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from arena.db.read_tables import round_, round_market


def first_offered(
    connection: Connection, cohort_ids: Collection[str], market_ids: Collection[str] | None = None
) -> list[tuple[str, str, datetime]]:
    """(cohort, market, time of the cohort's first round that offered it), for every market offered
    (or only ``market_ids``), ordered by cohort and market (one order: the same bits)."""
    query = (
        select(round_.c.cohort_id, round_market.c.market_id, func.min(round_.c.scheduled_at))
        .select_from(round_market)
        .join(round_, round_.c.id == round_market.c.round_id)
        .where(round_.c.cohort_id.in_(sorted(cohort_ids)))
        .group_by(round_.c.cohort_id, round_market.c.market_id)
        .order_by(round_.c.cohort_id, round_market.c.market_id)
    )
    if market_ids is not None:
        query = query.where(round_market.c.market_id.in_(sorted(market_ids)))
    return [(c, m, at) for c, m, at in connection.execute(query).all()]
