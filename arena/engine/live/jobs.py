"""One-shot jobs over every active live cohort: rounds, marks, settlement, completion.

The scheduler (``arena serve``) calls each as ``job(engine, clock) -> summary`` on its cadence;
each is safe to run twice or in two processes at once (claims, bucketed marks, one settlement
per position). A job that finds a round where every agent failed raises ``JobFailure`` so it is
recorded and reported as failed, never as success.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime

from sqlalchemy import Engine, update
from sqlmodel import Session, col, select

from agents.external import EXTERNAL_KIND
from arena.cohorts.config import config_from_frozen
from arena.core.clock import Clock
from arena.core.summary import Summary
from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    CohortRow,
    PositionRow,
    ResolutionRow,
    RoundMarketRow,
    RoundRow,
)
from arena.db.statuses import FINISHED_ROUND_STATUSES
from arena.engine.books.completion import complete_if_done, stale_positions
from arena.engine.books.marks import mark_rows, marked_in_bucket, persist_marks, unmarked_agents
from arena.engine.books.settlement import settle
from arena.engine.rounds.empty import EMPTY
from arena.engine.rounds.missed import miss_round, too_late
from arena.engine.rounds.report import RoundReport
from arena.engine.rounds.run import round_time, run_round
from arena.engine.runtime.agent_http import AgentHttpClients, ClientUnderLimits
from arena.engine.runtime.cohort import CohortRuntime, load_runtime
from arena.engine.store.ledger_store import LedgerConflict

log = logging.getLogger("arena.engine.live.jobs")


class JobFailure(RuntimeError):
    """A job ran but did not do its work (e.g. every agent of a round failed)."""


class RoundUnfinished(RuntimeError):
    """A round handed to workers did not finish in time; later rounds of its cohort wait for it."""


RoundRunner = Callable[[CohortRuntime, int, datetime], Awaitable[RoundReport]]
"""Runs round ``index`` of a cohort at its time: in-process (``run_round``) or planned for workers."""


RUNNABLE = ("pending", "running")
HELD = (*RUNNABLE, "paused")  # a paused cohort runs no rounds, but its positions still mark and settle


def live_cohorts(engine: Engine, statuses: tuple[str, ...] = RUNNABLE) -> list[str]:
    with Session(engine) as session:
        query = select(CohortRow.id).where(CohortRow.mode == "live", col(CohortRow.status).in_(statuses))
        return sorted(session.exec(query).all())


def awaiting_resolutions(engine: Engine) -> list[str]:
    """Completed live cohorts that offered a market not resolved yet.

    The sync keeps running for their venues (it refreshes every stored unresolved market), so
    their stated forecasts, which are scored on every market offered, get final scores too.
    """
    with Session(engine) as session:
        query = (
            select(RoundRow.cohort_id)
            .join(RoundMarketRow, col(RoundMarketRow.round_id) == col(RoundRow.id))
            .join(CohortRow, col(CohortRow.id) == col(RoundRow.cohort_id))
            .outerjoin(ResolutionRow, col(ResolutionRow.market_id) == col(RoundMarketRow.market_id))
            .where(CohortRow.mode == "live", CohortRow.status == "completed", col(ResolutionRow.id).is_(None))
            .distinct()
        )
        return sorted(session.exec(query).all())


def _runtime(
    engine: Engine,
    cohort_id: str,
    clock: Clock,
    *,
    environ: Mapping[str, str],
    new_http_client: ClientUnderLimits | None = None,
    with_bettors: bool = True,
) -> CohortRuntime:
    return load_runtime(
        engine,
        cohort_id,
        environ=environ,
        new_http_client=new_http_client,
        lease_clock=clock,
        with_bettors=with_bettors,
    )


def rounds_job(
    engine: Engine,
    clock: Clock,
    *,
    environ: Mapping[str, str],
    run: RoundRunner = run_round,
    by_workers: bool = False,
) -> str:
    """Run every due, unfinished decision round of every live cohort (point in time: each round
    uses the snapshot as of its scheduled time) with ``run``; ``by_workers`` says in the summary
    that ``run`` hands rounds to workers. A round found more than the cohort's
    ``schedule.catch_up_grace`` late is recorded as missed instead (``rounds.missed``); one with
    nothing to trade asks nobody, and the summary gives the reason (``rounds.empty``)."""
    return asyncio.run(_rounds(engine, clock, environ, run, by_workers))


async def _rounds(
    engine: Engine, clock: Clock, environ: Mapping[str, str], run: RoundRunner, by_workers: bool
) -> str:
    ran, missed, failed, unfinished, empty = 0, 0, [], [], list[str]()
    async with AgentHttpClients() as clients:
        for cohort_id in live_cohorts(engine):
            rt = _runtime(engine, cohort_id, clock, environ=environ, new_http_client=clients.new_client)
            for index in _due_rounds(rt, clock):
                _mark_running(engine, cohort_id)
                at = round_time(rt.start, rt.config.schedule.every, index)
                if (late := too_late(rt, at, clock.now())) is not None:
                    miss_round(rt, index, at, late)
                    missed += 1
                    continue
                try:
                    report = await run(rt, index, at)
                except RoundUnfinished as exc:
                    log.error("%s", exc)
                    unfinished.append(str(exc))
                    break  # later rounds of this cohort wait for this one
                if report.status == EMPTY:
                    log.warning("cohort %s round %s %s", cohort_id, index, report.note)
                    empty.append(f"{cohort_id} round {index} {report.note}")
                    continue
                ran += 1
                if report.failed:
                    failed.append(f"{cohort_id} round {index}")
    if failed or unfinished:
        problems = ([f"every agent failed in: {', '.join(failed)}"] if failed else []) + unfinished
        raise JobFailure("; ".join(problems + empty))
    how = " by workers" if by_workers else ""
    text = (
        f"{ran} rounds run{how}"
        + (f", {missed} missed (found later than schedule.catch_up_grace)" if missed else "")
        + (f", {len(empty)} asked nobody: {'; '.join(empty)}" if empty else "")
    )
    return Summary(text, idle=ran == missed == 0)


def _due_rounds(rt: CohortRuntime, clock: Clock) -> list[int]:
    now, every = clock.now(), rt.config.schedule.every
    with Session(rt.engine) as session:
        finished = set(
            session.exec(
                select(RoundRow.round_index).where(
                    RoundRow.cohort_id == rt.cohort_id, col(RoundRow.status).in_(FINISHED_ROUND_STATUSES)
                )
            ).all()
        )
    return [
        k for k in range(rt.planned_rounds()) if round_time(rt.start, every, k) <= now and k not in finished
    ]


def _mark_running(engine: Engine, cohort_id: str) -> None:
    with session_scope(engine) as session:
        session.execute(
            update(CohortRow)
            .where(col(CohortRow.id) == cohort_id, col(CohortRow.status) == "pending")
            .values(status="running")
        )


def marks_job(engine: Engine, clock: Clock, *, environ: Mapping[str, str]) -> str:
    """Mark every agent not yet marked in the current bucket of its cohort's ``marks.every``.

    The job polls often (``ARENA_MARKS_EVERY``, a minute): a cohort whose bucket is already
    marked costs two small queries, and is not loaded."""
    marked = sum(mark_cohort(engine, c, clock, environ=environ) for c in live_cohorts(engine, HELD))
    return Summary(f"{marked} portfolios marked", idle=marked == 0)


MARK_ATTEMPTS = 3
"""How often a mark is tried when fills are committed between its read of the ledgers and its
write (a round or a settlement committing at that moment); each attempt reads them again."""


def mark_cohort(engine: Engine, cohort_id: str, clock: Clock, *, environ: Mapping[str, str]) -> int:
    """Mark the cohort's agents without a mark in the current bucket (one commit); how many.
    The marks job runs this per cohort, in-process or as a worker's unit.

    The mark's time is read after its ledgers were read, and its write is fenced on their fill
    counts: it values exactly the fills stamped before it (see ``rounds.commit``). Fills committed
    in between make the write refused (``LedgerConflict``); the ledgers are read again and the
    mark retried, up to ``MARK_ATTEMPTS`` times."""
    if not marks_due(engine, cohort_id, clock.now()):
        return 0
    rt = _runtime(engine, cohort_id, clock, environ=environ, with_bettors=False)
    attempt = 1
    while True:
        at = clock.now()
        with Session(engine) as session:
            todo = unmarked_agents(session, rt, at)
        if not todo:
            return 0
        try:
            with session_scope(engine) as session:
                persist_marks(session, rt, mark_rows(rt, at, todo), at=at)
        except LedgerConflict:
            if attempt == MARK_ATTEMPTS:
                raise
            log.info("cohort %s: fills committed while marking; marking again", cohort_id)
            attempt += 1
            rt.reload()
            continue
        return len(todo)


def marks_due(engine: Engine, cohort_id: str, at: datetime) -> bool:
    """Whether some agent of the cohort has no mark in the bucket of its cadence holding ``at``."""
    with Session(engine) as session:
        row = session.get(CohortRow, cohort_id)
        assert row is not None
        config = config_from_frozen(row.config_json)
        assert config.start is not None, "a launched cohort always has its start frozen"
        seats = select(AgentRow.id).where(AgentRow.cohort_id == cohort_id, AgentRow.kind != EXTERNAL_KIND)
        agents = set(session.exec(seats).all())  # external forecasters hold no book to mark
        return not agents <= marked_in_bucket(session, cohort_id, config.start, config.marks.every, at)


def settlement_job(engine: Engine, clock: Clock, *, environ: Mapping[str, str]) -> str:
    """Apply every known resolution to the live cohorts that hold the market."""
    settled, deferred = 0, list[str]()
    for cohort_id in live_cohorts(engine, HELD):
        done, later = settle_cohort(engine, cohort_id, clock, environ=environ)
        settled, deferred = settled + done, deferred + later
    return settlement_summary(settled, deferred)


def settle_cohort(
    engine: Engine, cohort_id: str, clock: Clock, *, environ: Mapping[str, str]
) -> tuple[int, list[str]]:
    """Settle the cohort's positions in resolved markets: (positions settled, deferred markets
    with the reason). The settle job runs this per cohort, in-process or as a worker's unit."""
    rt = _runtime(engine, cohort_id, clock, environ=environ, with_bettors=False)
    held = {p.market_id for s in rt.agents for p in s.book.ledger.open_positions()}
    known = [r for r in rt.source.resolutions(clock.now()) if r.market_id in held]
    report = settle(rt, known, clock.now())
    return sum(report.settled.values()), [f"{m} ({why})" for m, why in report.deferred.items()]


def settlement_summary(settled: int, deferred: list[str]) -> Summary:
    text = f"{settled} positions settled" + (f"; deferred: {', '.join(deferred)}" if deferred else "")
    return Summary(text, idle=settled == 0 and not deferred)


def settlement_due(engine: Engine, cohort_id: str) -> bool:
    """Whether an open position of the cohort is in a market with a stored resolution: the only
    work a settlement can find (a cheap look before handing the cohort to a worker)."""
    with Session(engine) as session:
        query = (
            select(PositionRow.agent_id)
            .join(AgentRow, col(AgentRow.id) == col(PositionRow.agent_id))
            .join(ResolutionRow, col(ResolutionRow.market_id) == col(PositionRow.market_id))
            .where(AgentRow.cohort_id == cohort_id, PositionRow.status == "open")
            .limit(1)
        )
        return session.exec(query).first() is not None


def completion_job(engine: Engine, clock: Clock, *, environ: Mapping[str, str]) -> str:
    """Complete finished live cohorts; report positions stuck waiting for a resolution."""
    completed, stale = [], []
    for cohort_id in live_cohorts(engine):
        rt = _runtime(engine, cohort_id, clock, environ=environ, with_bettors=False)
        if complete_if_done(rt, clock.now()):
            completed.append(cohort_id)
        else:
            stale += [f"{cohort_id}: {s.describe(clock.now())}" for s in stale_positions(rt, clock.now())]
    message = f"{len(completed)} cohorts completed"
    text = message + (f"; stale positions: {'; '.join(stale)}" if stale else "")
    return Summary(text, idle=not completed and not stale)
