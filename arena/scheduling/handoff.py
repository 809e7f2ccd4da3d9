"""``arena serve`` with workers: the rounds, marks, settlement and sync jobs queue units instead of running.

Rounds are planned as one decision unit per agent whenever a worker is alive (``planner``).

When at least one ``arena worker`` is idle (``roster.idle``: a heartbeat within the last minute
and no unit running), each of these jobs queues one unit per cohort that has work (per venue for
a sync, which serves every cohort on it) and waits for them, up to its own cadence; the job's
outcome is theirs: a failed unit fails the job, so ``arena status`` reports it as it would an
in-process failure. With none (no worker, or every one busy, e.g. with a long replay) the job
runs in-process exactly as before.

A unit already queued or running for the same work is reused, not queued again (the queue's
unique index decides); the enqueue is a write of the job, fenced by the scheduler lease like any
other. The units themselves are fenced by their own leases (``arena.workers.units``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

from sqlalchemy import Engine

from arena.core.clock import Clock
from arena.core.summary import Summary
from arena.engine.live import jobs as live
from arena.engine.live.venue_sync import live_venues, sync_job
from arena.scheduling.planner import plan_round
from arena.workers import queue, roster

POLL_SECONDS = 0.5
Leading = Callable[[], bool]


def rounds(engine: Engine, clock: Clock, *, environ: Mapping[str, str]) -> str:
    """The rounds job: planned as one unit per agent when ``arena worker`` processes are alive
    (PostgreSQL only, ``planner.plan_round``); with none, run in-process."""
    if engine.dialect.name == "postgresql" and roster.live_workers(engine, clock.now()) > 0:
        return live.rounds_job(engine, clock, environ=environ, run=plan_round, by_workers=True)
    return live.rounds_job(engine, clock, environ=environ)


def marks(
    engine: Engine, clock: Clock, *, environ: Mapping[str, str], leading: Leading, within: timedelta
) -> str:
    """The marks job: cohorts with an agent unmarked in its current bucket, one unit each."""
    if not roster.idle(engine, clock.now()):
        return live.marks_job(engine, clock, environ=environ)
    due = [c for c in live.live_cohorts(engine, live.HELD) if live.marks_due(engine, c, clock.now())]
    return hand_over(engine, clock, queue.MARKS, [(c, c) for c in due], leading=leading, within=within)


def settle(
    engine: Engine, clock: Clock, *, environ: Mapping[str, str], leading: Leading, within: timedelta
) -> str:
    """The settle job: cohorts holding a market with a stored resolution, one unit each."""
    if not roster.idle(engine, clock.now()):
        return live.settlement_job(engine, clock, environ=environ)
    due = [c for c in live.live_cohorts(engine, live.HELD) if live.settlement_due(engine, c)]
    return hand_over(engine, clock, queue.SETTLE, [(c, c) for c in due], leading=leading, within=within)


def sync(engine: Engine, clock: Clock, *, leading: Leading, within: timedelta) -> str:
    """The sync job: one unit per venue of the live cohorts."""
    if not roster.idle(engine, clock.now()):
        return sync_job(engine, clock)
    venues = [(str(v), None) for v in live_venues(engine)]
    return hand_over(engine, clock, queue.SYNC, venues, leading=leading, within=within)


def hand_over(
    engine: Engine,
    clock: Clock,
    kind: str,
    work: Sequence[tuple[str, str | None]],
    *,
    leading: Leading,
    within: timedelta,
) -> str:
    """Queue a unit of ``kind`` per (key, cohort) in ``work`` and wait for them: until all are
    finished, ``within`` has passed (wall time: waiting is about processes), or this process no
    longer leads. Raises ``JobFailure`` naming every failed unit; a unit done in part (its
    ``error`` column holds a warning) makes the summary partial."""
    if not work:
        return Summary(f"nothing to hand to workers: no {kind} due", idle=True)
    units = [queue.enqueue(engine, kind, key, clock.now(), cohort_id=cohort) for key, cohort in work]
    ids = [unit for unit, _ in units]
    reused = sum(not new for _, new in units)
    deadline = time.monotonic() + within.total_seconds()
    while True:
        rows = queue.state_of(engine, ids)
        open_ = [i for i in ids if rows[i].state in queue.UNFINISHED]
        if not open_ or time.monotonic() >= deadline or not leading():
            break
        time.sleep(POLL_SECONDS)
    failed = [
        f"unit {i} ({kind} of {rows[i].dedup_key}): {rows[i].error}"
        for i in ids
        if rows[i].state == queue.FAILED
    ]
    if failed:
        raise live.JobFailure("; ".join(failed))
    warnings = [
        f"unit {i} ({kind} of {rows[i].dedup_key}): {rows[i].error}"
        for i in ids
        if rows[i].state == queue.DONE and rows[i].error
    ]
    message = f"{len(ids)} {kind} unit(s) for workers" + (f" ({reused} already queued)" if reused else "")
    done = len(ids) - len(open_)
    text = (
        message
        + f": {done} done"
        + (f", {len(open_)} still queued or running (units {open_})" if open_ else "")
    )
    return Summary(text, warnings=warnings)
