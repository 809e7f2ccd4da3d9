"""What a worker does with each kind of unit: ``RUNNERS``, one small table from kind to runner.

A runner gets the worker and the unit it took, runs it and finishes it under its lease. Most
kinds are one job on one unit (``single(job)``): the job gets the unit's context and returns its
outcome, and the worker renews the lease meanwhile and finishes the unit with that outcome.
Decision units are many small units run at once by one worker (``decision_units``).

Every write of a unit can be fenced by its lease (``fence.UnitFence``): the transaction checks
last, before its commit, that the unit's lease token is still in its row (locked ``FOR SHARE``
until the commit, so a taker cannot take the unit over in between). The live jobs (marks,
settlement, sync) write through ``ctx.fenced``, and decision units through the same fence; a
worker that lost its lease (paused, cut off, slow) therefore commits nothing more once another
worker took the unit. A replay is fenced inside, by its decision claims and the cohort's replay
lease; it is stopped early when its lease is lost.

A new kind of unit is a runner here and an entry in ``RUNNERS`` (and in ``work_unit.kind``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from arena.engine.live import jobs as live
from arena.engine.live.venue_sync import SyncStoredNothing, sync_one_venue
from arena.engine.replay.runner import ReplayResult, replay_cohort
from arena.workers import queue
from arena.workers.decision_units import run_decision_units
from arena.workers.fence import LeaseLost
from arena.workers.host import Job, UnitContext, UnitHost
from arena.workers.queue import Lease, Outcome
from markets.types import Venue


def run_replay(ctx: UnitContext) -> Outcome:
    """Replay the cohort to its end; a lost lease cancels it at once (``LeaseLost``)."""

    async def main() -> ReplayResult:
        task, loop = asyncio.current_task(), asyncio.get_running_loop()
        assert task is not None
        ctx.when_lost(lambda: loop.call_soon_threadsafe(task.cancel))
        try:
            return await replay_cohort(
                ctx.engine,
                ctx.lease.key,
                environ=ctx.environ,
                wall_clock=ctx.clock,
                lease_ttl=ctx.lease_ttl,
                synchronous_commit=ctx.synchronous_commit,
            )
        except asyncio.CancelledError:
            if ctx.lost.is_set():
                raise LeaseLost from None
            raise
        finally:
            ctx.when_lost(None)

    return Outcome(_unfinished(asyncio.run(main())))


def _unfinished(result: ReplayResult) -> str | None:
    """Why a replay that returned did not finish its cohort, or None: a cohort paused or
    cancelled mid-run, or every agent failing in a round, fails the unit (a resumed cohort is
    queued again); data that ended with positions open is a finished replay."""
    if result.stopped:
        return f"stopped: the cohort is {result.stopped}"
    failed = [r.round_index for r in result.failed_rounds]
    return f"every agent failed in round(s) {failed}" if failed else None


def run_marks(ctx: UnitContext) -> Outcome:
    marked = live.mark_cohort(ctx.fenced, ctx.lease.key, ctx.clock, environ=ctx.environ)
    return Outcome(None, f"{marked} portfolios marked")


def run_settle(ctx: UnitContext) -> Outcome:
    settled, deferred = live.settle_cohort(ctx.fenced, ctx.lease.key, ctx.clock, environ=ctx.environ)
    return Outcome(None, live.settlement_summary(settled, deferred))


def run_sync(ctx: UnitContext) -> Outcome:
    """Sync the venue; problems met while storing the rest make the unit done with a warning, a
    sync that stored nothing fails it (in one line: the venue's outage is not a worker's bug)."""
    try:
        summary = sync_one_venue(ctx.fenced, ctx.clock, Venue(ctx.lease.key))
    except SyncStoredNothing as exc:
        return Outcome(str(exc))
    return Outcome(None, summary, warning="; ".join(summary.warnings) or None)


Runner = Callable[[UnitHost, Lease], None]


def single(job: Job) -> Runner:
    """The runner of a kind whose unit is one job: the worker runs it (``Worker.run_one``)."""
    return lambda worker, lease: worker.run_one(lease, job)


RUNNERS: dict[str, Runner] = {
    queue.REPLAY: single(run_replay),
    queue.MARKS: single(run_marks),
    queue.SETTLE: single(run_settle),
    queue.SYNC: single(run_sync),
    queue.DECISION: run_decision_units,
}
