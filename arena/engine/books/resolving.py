"""The operator's override that resolves a market by hand (``arena markets resolve``).

An override names YES, NO, VOID, 5050 or any outcome of a multi-outcome market; it is stored on
the market's resolution row (``source = "operator"``, ``override_note``; the venue's answer it
replaces, if any, kept in ``venue_answer_json``), logged and recorded in ``job_run``, then settled
in every cohort that holds the market. An override can never undo a settlement already paid: that
would rewrite the fill log. Markets waiting for a resolution are listed by ``books.pending``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.market_rows import OPERATOR, resolution_from_row
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
from arena.sync.outcomes import describe, venue_answer
from markets.types import BINARY_OUTCOMES, YES, Resolution, ResolutionKind

log = logging.getLogger("arena.engine.books.resolving")

ACTIVE = ("pending", "running", "paused")


class OverrideError(RuntimeError):
    pass


def operator_resolution(market: MarketRow, answer: str, now: datetime) -> Resolution:
    """The operator's ``answer`` for ``market`` as a resolution: ``VOID`` (refund), ``5050`` (a
    YES/NO market only), or the name of an outcome (exact, else the one outcome that matches
    ignoring case): YES or NO on a binary market, the winner of a multi-outcome one."""
    outcomes = tuple(market.outcomes_json)
    binary = outcomes == BINARY_OUTCOMES
    word = answer.strip()
    if word.upper() == "VOID":
        return Resolution(market.id, ResolutionKind.VOID, {}, now, OPERATOR)
    if word.upper() == "5050":
        if not binary:
            raise OverrideError(
                f"--outcome 5050 is for YES/NO markets; {market.id} has outcomes {list(outcomes)}: "
                "name the winner, or VOID"
            )
        return Resolution.binary(market.id, ResolutionKind.FIFTY_FIFTY, now, OPERATOR)
    matches = [o for o in outcomes if o == word] or [o for o in outcomes if o.casefold() == word.casefold()]
    if len(matches) != 1:
        choices = ", ".join([*outcomes, "VOID", *(["5050"] if binary else [])])
        raise OverrideError(
            f"--outcome {answer!r} is not an outcome of {market.id}; expected one of: {choices}"
        )
    if binary:
        kind = ResolutionKind.YES if matches[0] == YES else ResolutionKind.NO
        return Resolution.binary(market.id, kind, now, OPERATOR)
    return Resolution.winner(market.id, outcomes, matches[0], now, OPERATOR)


def override(
    engine: Engine,
    market_id: str,
    answer: str,
    *,
    note: str,
    now: datetime,
    environ: Mapping[str, str],
) -> tuple[Resolution, dict[str, int]]:
    """Store the operator's resolution (``answer``: see ``operator_resolution``) and settle it in
    every active cohort holding the market; returns it and the positions settled per cohort."""
    resolution = _store_override(engine, market_id, answer, note, now)
    settled: dict[str, int] = {}
    for cohort_id in _holding_cohorts(engine, market_id):
        settled[cohort_id] = _settle_in(engine, cohort_id, resolution, now, environ)
    with session_scope(engine) as session:
        session.add(
            JobRunRow(
                job="resolve-override",
                scope=market_id,
                started_at=now,
                finished_at=now,
                ok=True,
                message=f"{describe(resolution)} by operator: {note}",
                details_json={"settled": settled},
            )
        )
    log.warning(
        "operator override: %s resolved %s (%s); settled %s", market_id, describe(resolution), note, settled
    )
    return resolution, settled


def _store_override(engine: Engine, market_id: str, answer: str, note: str, now: datetime) -> Resolution:
    """Write the operator's resolution on the market's row (replacing an unsettled one, whose
    venue answer is kept beside it); refused for an unknown or already settled market."""
    with session_scope(engine) as session:
        market = session.get(MarketRow, market_id)
        if market is None:
            raise OverrideError(
                f"unknown market {market_id!r}; ids look like polymarket:0x… or manifold:abc "
                "(see `arena markets pending`)"
            )
        resolution = operator_resolution(market, answer, now)
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
        if row is None:
            row = ResolutionRow(
                market_id=market_id, kind=resolution.kind.value, resolved_at=now, detected_at=now
            )
        elif row.source != OPERATOR:  # the venue's answer, which could not be applied: kept beside it
            row.venue_answer_json = venue_answer(resolution_from_row(row), row.detected_at)
        row.kind, row.payouts_json, row.resolved_at, row.detected_at = (
            resolution.kind.value,
            decimals_to_json(resolution.payouts),
            now,
            now,
        )
        row.source, row.override_note = OPERATOR, f"operator override at {now.isoformat()}: {note}"
        session.add(row)
    return resolution


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
