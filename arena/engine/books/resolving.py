"""Markets waiting for a resolution, and the operator's override that settles them by hand.

A market is pending when some active cohort still holds it and either it has closed without a
resolution or its stored resolution could not be applied (e.g. a winner that is not an outcome).
An override is stored on the resolution row (``source = "operator"``, ``override_note``), logged
and recorded in ``job_run``, then settled in every cohort that holds the market. An override can
never undo a settlement already paid: that would rewrite the fill log.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import sqlalchemy as sa
from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    CohortRow,
    FillRow,
    JobRunRow,
    MarketRow,
    PortfolioSnapshotRow,
    PositionRow,
    ResolutionRow,
)
from arena.db.types import decimals_to_json
from arena.engine.books.completion import complete_if_done
from arena.engine.books.marks import mark_rows, persist_marks
from arena.engine.books.settlement import settle
from arena.engine.runtime.cohort import load_runtime
from markets.types import Resolution, ResolutionKind

log = logging.getLogger("arena.engine.books.resolving")

ACTIVE = ("pending", "running", "paused")


class OverrideError(RuntimeError):
    pass


@dataclass(frozen=True)
class PendingMarket:
    market_id: str
    question: str
    close_time: datetime | None
    cohorts: int
    positions: int
    reason: str


def pending_markets(engine: Engine, now: datetime) -> list[PendingMarket]:
    """Held markets (active cohorts) closed by ``now`` without a resolution, or with one that could
    not be applied."""
    with Session(engine) as session:
        rows = session.execute(  # sqlalchemy's select: sqlmodel's is typed for at most four columns
            sa.select(
                col(MarketRow.id),
                col(MarketRow.question),
                col(MarketRow.close_time),
                col(ResolutionRow.kind),
                func.count(func.distinct(AgentRow.cohort_id)),
                func.count(),
            )
            .join(PositionRow, col(PositionRow.market_id) == col(MarketRow.id))
            .join(AgentRow, col(AgentRow.id) == col(PositionRow.agent_id))
            .join(CohortRow, col(CohortRow.id) == col(AgentRow.cohort_id))
            .outerjoin(ResolutionRow, col(ResolutionRow.market_id) == col(MarketRow.id))
            .where(col(PositionRow.status) == "open", col(CohortRow.status).in_(ACTIVE))
            .group_by(
                col(MarketRow.id), col(MarketRow.question), col(MarketRow.close_time), col(ResolutionRow.kind)
            )
            .order_by(col(MarketRow.close_time))
        ).all()
    found = []
    for market_id, question, close, kind, cohorts, positions in rows:
        if kind is not None:
            reason = f"resolved {kind} but not applicable to the positions held (deferred)"
        elif close is not None and close <= now:
            reason = "closed, no resolution yet"
        else:
            continue
        found.append(PendingMarket(market_id, question, close, int(cohorts), int(positions), reason))
    return found


def override(
    engine: Engine,
    market_id: str,
    kind: ResolutionKind,
    *,
    note: str,
    now: datetime,
    environ: Mapping[str, str],
) -> dict[str, int]:
    """Store the operator's resolution and settle it in every active cohort holding the market;
    returns positions settled per cohort."""
    payouts = Resolution.binary(market_id, kind, now, "operator").payouts
    _store_override(engine, market_id, kind, payouts, note, now)
    settled: dict[str, int] = {}
    for cohort_id in _holding_cohorts(engine, market_id):
        settled[cohort_id] = _settle_in(
            engine, cohort_id, Resolution(market_id, kind, payouts, now, "operator"), now, environ
        )
    with session_scope(engine) as session:
        session.add(
            JobRunRow(
                job="resolve-override",
                scope=market_id,
                started_at=now,
                finished_at=now,
                ok=True,
                message=f"{kind.value} by operator: {note}",
                details_json={"settled": settled},
            )
        )
    log.warning("operator override: %s resolved %s (%s); settled %s", market_id, kind.value, note, settled)
    return settled


def _store_override(
    engine: Engine,
    market_id: str,
    kind: ResolutionKind,
    payouts: Mapping[str, Decimal],
    note: str,
    now: datetime,
) -> None:
    with session_scope(engine) as session:
        if session.get(MarketRow, market_id) is None:
            raise OverrideError(
                f"unknown market {market_id!r}; ids look like polymarket:0x… or manifold:abc "
                "(see `arena markets pending`)"
            )
        paid = session.exec(
            select(func.count())
            .select_from(FillRow)
            .where(FillRow.market_id == market_id, FillRow.kind == "settle")
        ).one()
        row = session.exec(select(ResolutionRow).where(ResolutionRow.market_id == market_id)).first()
        if paid and row is not None:
            raise OverrideError(
                f"{market_id} is already resolved {row.kind} and settled ({paid} positions); "
                "an override cannot undo paid settlements"
            )
        row = row or ResolutionRow(market_id=market_id, kind=kind.value, resolved_at=now, detected_at=now)
        row.kind, row.payouts_json, row.resolved_at, row.detected_at = (
            kind.value,
            decimals_to_json(payouts),
            now,
            now,
        )
        row.source, row.override_note = "operator", f"operator override at {now.isoformat()}: {note}"
        session.add(row)


def _holding_cohorts(engine: Engine, market_id: str) -> list[str]:
    with Session(engine) as session:
        rows = session.exec(
            select(AgentRow.cohort_id)
            .join(PositionRow, col(PositionRow.agent_id) == col(AgentRow.id))
            .join(CohortRow, col(CohortRow.id) == col(AgentRow.cohort_id))
            .where(
                PositionRow.market_id == market_id,
                PositionRow.status == "open",
                col(CohortRow.status).in_(ACTIVE),
            )
            .distinct()
        ).all()
    return sorted(rows)


def _settle_in(
    engine: Engine, cohort_id: str, resolution: Resolution, now: datetime, environ: Mapping[str, str]
) -> int:
    """Settle in one cohort at its present: wall time for live, its last mark for a replay (whose
    simulated clock stopped there), then mark again so snapshots match the fill log: a replay
    that last instant, a live cohort the time after its settlement fills were stamped."""
    with Session(engine) as session:
        last = session.exec(
            select(func.max(PortfolioSnapshotRow.marked_at)).where(
                PortfolioSnapshotRow.cohort_id == cohort_id
            )
        ).one()
    rt = load_runtime(engine, cohort_id, environ=environ, with_bettors=False)
    at = now if rt.config.mode == "live" or last is None else last
    report = settle(rt, [resolution], at)
    if resolution.market_id in report.deferred:
        raise OverrideError(f"cohort {cohort_id}: {report.deferred[resolution.market_id]}")
    marked_at = rt.happened_at(at)
    with session_scope(engine) as session:
        persist_marks(session, rt, mark_rows(rt, marked_at), at=marked_at, replace=True)
    complete_if_done(rt, at)
    return report.settled.get(resolution.market_id, 0)
