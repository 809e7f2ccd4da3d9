"""Markets waiting for a resolution: what ``arena markets pending`` lists.

A market is pending when some cohort (not cancelled) holds it or stated a forecast on it and it
has no final resolution: none yet, whatever its dates (a disputed market that closed before its
end date counts: the venue's status says it stopped trading), one that could not be applied to
the positions held (e.g. a winner that is not an outcome: deferred), or an operator's override
that the venue's own later answer contradicts. Each comes with the venue's status of it as last
synced (``MarketRow.venue_status``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.db.market_rows import OPERATOR, chunks, resolution_from_row
from arena.db.models import AgentRow, CohortRow, MarketRow, PositionRow, ResolutionRow
from arena.db.types import decimals_from_json
from arena.sync.outcomes import TRADING, describe, same_outcome
from markets.types import Resolution, ResolutionKind


@dataclass(frozen=True)
class PendingMarket:
    """A market some cohort holds or stated a forecast on, without a final resolution."""

    market_id: str
    question: str
    close_time: datetime | None
    venue_status: str | None  # as the last sync saw it (``MarketRow.venue_status``); None: never synced
    cohorts: int  # cohorts holding it or having stated on it
    positions: int  # open positions in it
    reason: str
    trading: bool  # the venue still trades it (and its close time has not passed)


def pending_markets(engine: Engine, now: datetime) -> list[PendingMarket]:
    """Every market a cohort (not cancelled) holds or stated a forecast on that has no final
    resolution, whatever its dates: none stored, one stored that could not be applied to the
    positions held (deferred), or an operator's override the venue's own answer contradicts.
    Markets that stopped trading come first (by close time), then those the venue still trades."""
    with Session(engine) as session:
        held = _held(session)
        involved = _stated(session)
        for market_id, cohort_ids in held.items():
            involved.setdefault(market_id, set()).update(cohort_ids)
        positions = {m: sum(n.values()) for m, n in held.items()}
        found = []
        for part in chunks(sorted(involved)):
            rows = session.exec(
                select(MarketRow, ResolutionRow)
                .outerjoin(ResolutionRow, col(ResolutionRow.market_id) == col(MarketRow.id))
                .where(col(MarketRow.id).in_(part))
            ).all()
            found += [
                _pending(market, resolution, len(involved[market.id]), positions.get(market.id, 0), now)
                for market, resolution in rows
            ]
        found += _contradicted(session, exclude=set(involved), now=now)
    pending = [p for p in found if p is not None]
    return sorted(pending, key=lambda p: (p.trading, p.close_time or now, p.market_id))


def _held(session: Session) -> dict[str, dict[str, int]]:
    """Open positions per market and cohort (cohorts not cancelled)."""
    rows = session.exec(
        select(PositionRow.market_id, AgentRow.cohort_id, func.count())
        .join(AgentRow, col(AgentRow.id) == col(PositionRow.agent_id))
        .join(CohortRow, col(CohortRow.id) == col(AgentRow.cohort_id))
        .where(col(PositionRow.status) == "open", col(CohortRow.status) != "cancelled")
        .group_by(col(PositionRow.market_id), col(AgentRow.cohort_id))
    ).all()
    held: dict[str, dict[str, int]] = {}
    for market_id, cohort_id, n in rows:
        held.setdefault(market_id, {})[cohort_id] = int(n)
    return held


# The markets each decision stated a probability on: the keys of its ``probabilities_json``.
_STATED = {
    "sqlite": "SELECT DISTINCT j.key, d.cohort_id FROM decision d JOIN cohort c ON c.id = d.cohort_id, "
    "json_each(d.probabilities_json) j WHERE c.status <> 'cancelled'",
    "postgresql": "SELECT DISTINCT jsonb_object_keys(d.probabilities_json), d.cohort_id FROM decision d "
    "JOIN cohort c ON c.id = d.cohort_id WHERE c.status <> 'cancelled' AND d.probabilities_json <> '{}'",
}


def _stated(session: Session) -> dict[str, set[str]]:
    """Cohorts (not cancelled) per market some agent of theirs stated a forecast on; the ids are
    the agents' text, so ones naming no stored market drop out when the markets are read."""
    rows = session.connection().execute(sa.text(_STATED[session.get_bind().dialect.name])).all()
    stated: dict[str, set[str]] = {}
    for market_id, cohort_id in rows:
        stated.setdefault(market_id, set()).add(cohort_id)
    return stated


def _pending(
    market: MarketRow, resolution: ResolutionRow | None, cohorts: int, positions: int, now: datetime
) -> PendingMarket | None:
    """The market as pending, with why; None when its resolution is final."""
    closed = market.close_time is not None and market.close_time <= now
    trading = market.venue_status == TRADING and not closed
    if resolution is None:
        reason = "no resolution yet" if trading else "closed, no resolution yet"
    elif positions:
        reason = f"resolved {resolution.kind} but not applicable to the positions held (deferred)"
    elif (why := _contradiction(resolution)) is not None:
        reason = why
    else:
        return None
    return PendingMarket(
        market.id,
        market.question,
        market.close_time,
        market.venue_status,
        cohorts,
        positions,
        reason,
        trading,
    )


def _contradiction(resolution: ResolutionRow) -> str | None:
    """Why an operator's override is in doubt: the venue's own answer says otherwise."""
    answer = resolution.venue_answer_json
    if resolution.source != OPERATOR or not isinstance(answer, dict):
        return None
    stated = resolution_from_row(resolution)
    venue = Resolution(
        stated.market_id,
        ResolutionKind(answer["kind"]),
        decimals_from_json(answer["payouts"], field=f"resolution {resolution.id} venue_answer_json"),
        stated.resolved_at,
    )
    if same_outcome(stated, venue):
        return None
    said = f"override {describe(stated)} contradicted by the venue's answer {describe(venue)}"
    return f"{said} (the override stands)"


def _contradicted(session: Session, *, exclude: set[str], now: datetime) -> list[PendingMarket | None]:
    """Overrides the venue contradicted, of markets no cohort holds or stated on any more."""
    rows = session.exec(
        select(MarketRow, ResolutionRow)
        .join(ResolutionRow, col(ResolutionRow.market_id) == col(MarketRow.id))
        .where(col(ResolutionRow.source) == OPERATOR)
    ).all()
    return [
        _pending(m, r, 0, 0, now) for m, r in rows if m.id not in exclude and _contradiction(r) is not None
    ]
