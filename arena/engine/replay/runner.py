"""The replay loop: a ``SimulatedClock`` stepped through a dataset, running the same jobs as live.

At each step t (the union of the decision-round grid and the mark grid): resolutions known at t
are recorded and settled, then the round due at t runs, then the portfolios are marked. The loop
stops when the rounds are done and every position is settled, or when the data ends; the
dataset's later resolutions of markets the cohort offered are then stored too, so every stated
forecast is scored (scoring never depends on which positions kept the cohort open).

Ledgers stay in memory for the whole replay, while every agent-round and every settlement still
commits on its own. Marks of the days between (no round, no settlement), the resolutions of
offered markets nobody holds, and the dataset's price path of the offered markets
(``price_path``: what the tournament's reference follows between rounds) are buffered and
written first in the next write transaction (a round's: ``with_prelude``), or in one of their
own just before a settlement, which keeps the database's history in time order: every write at
step t comes after all marks and resolutions before t. A crashed replay therefore resumes at the
first step after its last stored mark, with ledgers rebuilt from the fill log, and produces
exactly what an uninterrupted run would.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import Engine, bindparam, func, update
from sqlmodel import Session, col, select

from arena.core.clock import Clock, SimulatedClock
from arena.core.heap import long_lived_heap
from arena.db.engine import relaxed_commits, session_scope, with_prelude
from arena.db.market_rows import resolution_row, write_resolutions
from arena.db.models import CohortRow, JobRunRow, PortfolioSnapshotRow, RoundMarketRow, RoundRow
from arena.engine.books.completion import (
    StalePosition,
    complete_if_done,
    open_positions,
    stale_positions,
)
from arena.engine.books.marks import mark_rows, persist_marks
from arena.engine.books.settlement import record_later_resolutions, settle
from arena.engine.replay.lease import RUN_LEASE_TTL, replay_lease
from arena.engine.replay.price_path import PricePath, store_points
from arena.engine.rounds.report import RoundReport
from arena.engine.rounds.run import round_time, run_round
from arena.engine.runtime.agent_http import AgentHttpClients
from arena.engine.runtime.cohort import CohortRuntime, load_runtime
from arena.engine.runtime.views import held_markets
from markets.types import MarketSource, Resolution

log = logging.getLogger("arena.engine.replay.runner")
BUSY_RETRY = timedelta(seconds=15)


RoundRunner = Callable[[CohortRuntime, int, datetime], Awaitable[RoundReport]]
"""How a round is run: ``run_round`` in this process, or a planner's units for workers."""


class CohortNotRunnable(RuntimeError):
    """The cohort cannot be replayed: its market source has no data end (a live source)."""


class Progress(Protocol):
    def start(self, total_steps: int) -> None: ...

    def step(self, at: datetime, report: RoundReport | None) -> None: ...


@dataclass
class ReplayResult:
    cohort_id: str
    rounds: list[RoundReport] = field(default_factory=list)
    completed: bool = False
    stopped: str | None = None  # why the loop stopped early (paused, cancelled)
    stale: list[StalePosition] = field(default_factory=list)
    open_positions: int = 0  # positions still open when the run ended (stale ones included)
    end: datetime | None = None

    @property
    def failed_rounds(self) -> list[RoundReport]:
        return [r for r in self.rounds if r.failed]


class ReplayRunner:
    def __init__(
        self, rt: CohortRuntime, *, progress: Progress | None = None, round_runner: RoundRunner = run_round
    ) -> None:
        self.rt = replace(rt, engine=with_prelude(rt.engine, self))  # the buffered rows: ``write``
        self.progress = progress
        self._run_round = round_runner
        self._pending_marks: list[dict[str, object]] = []
        self._pending_resolutions: list[dict[str, object]] = []
        self._pending_prices: list[dict[str, object]] = []
        self._writing = (0, 0, 0)  # how many buffered rows the open write transaction stores
        self._offered: set[str] = set()
        self._resolutions: list[Resolution] = []
        self._resolved_upto = 0
        self._resolved: set[str] = set()
        self._path = PricePath(rt.source)
        self._last_round_at = rt.start
        self._marked_until = rt.start

    async def run(self) -> ReplayResult:
        rt, result = self.rt, ReplayResult(self.rt.cohort_id)
        end = getattr(rt.source, "end", None)
        if end is None:
            raise CohortNotRunnable(
                f"cohort {rt.cohort_id}: its market source has no data end; is it a replay?"
            )
        rounds = {round_time(rt.start, rt.config.schedule.every, k): k for k in range(rt.planned_rounds())}
        self._last_round_at = max(rounds, default=rt.start)
        steps = self._steps(set(rounds), end)
        clock = SimulatedClock(steps[0] if steps else rt.start)
        if (status := self._cohort_status()) in ("paused", "cancelled"):
            result.stopped = status
            return result
        self._prepare(end)
        if self.progress:
            self.progress.start(len(steps))
        with long_lived_heap():
            for at in steps:
                clock.set(at)
                stop = await self._step(at, rounds.get(at), result)
                if stop:
                    break
        self._flush()
        result.end = clock.now()
        result.completed = result.completed or complete_if_done(rt, clock.now())
        if result.completed:
            later = self._resolutions[self._resolved_upto :]
            record_later_resolutions(rt, [r for r in later if r.market_id in self._offered])
        result.stale = [] if result.completed else stale_positions(rt, clock.now())
        result.open_positions = open_positions(rt)
        return result

    async def _step(self, at: datetime, index: int | None, result: ReplayResult) -> bool:
        """One instant of simulated time; True when the loop should stop."""
        new = self._due_resolutions(at)
        self._pending_resolutions += [
            resolution_row(r, at, None) for r in new if r.market_id in self._offered
        ]
        held = held_markets([s.book.ledger for s in self.rt.agents]) if new else set()
        settling = [r for r in new if r.market_id in held]
        if settling:  # what is buffered before it goes first (a round's first write takes it along)
            self._flush()
        if index is not None and (status := self._cohort_status()) not in ("pending", "running"):
            result.stopped = status  # paused or cancelled meanwhile: stop before the next round
            return True
        if settling:
            settle(self.rt, settling, at)
        report = None
        if index is not None:
            report = await self._round(index, at)
            result.rounds.append(report)
            self._offered |= self._round_markets(index)
        if at <= self.rt.decisions_end:  # question windows end there at the latest
            self._pending_prices += self._path.new_points(self._offered - self._resolved, at)
        self._pending_marks += mark_rows(self.rt, at)
        self._marked_until = at
        if self.progress:
            self.progress.step(at, report)
        if index is None and at >= self._last_round_at and not open_positions(self.rt):
            self._flush()
            result.completed = complete_if_done(self.rt, at)
        return result.completed

    async def _round(self, index: int, at: datetime) -> RoundReport:
        """Run the round; while another runner holds some of its claims (a crashed run's, until
        their lease expires), wait and retry: a replay never moves on with a round half done."""
        report = await self._run_round(self.rt, index, at)
        while report.status == "busy":
            pause = min(self.rt.claim_lease, BUSY_RETRY)
            log.warning(
                "cohort %s round %s: decisions claimed by another runner; "
                "retrying in %ss (claims expire after %s)",
                self.rt.cohort_id,
                index,
                pause.total_seconds(),
                self.rt.claim_lease,
            )
            await asyncio.sleep(pause.total_seconds())
            report = await self._run_round(self.rt, index, at)
        return report

    def _steps(self, round_times: set[datetime], end: datetime) -> list[datetime]:
        """Every round and mark instant through the data end, after the last stored mark (resume).

        The mark grid runs to the first instant at or after ``end``: recorded data resolves
        markets at any time of day, and a resolution after the last grid instant before ``end``
        would otherwise never be reached, leaving its positions open and the cohort running."""
        every, start = self.rt.config.marks.every, self.rt.start
        marks = (
            {start + every * j for j in range(_steps_to_reach(end - start, every) + 1)}
            if end >= start
            else set()
        )
        resume_after = self._last_mark()
        return sorted(t for t in marks | round_times if resume_after is None or t > resume_after)

    def _prepare(self, end: datetime) -> None:
        """Resolutions in time order, markets already offered (when resuming), cohort running."""
        self._resolutions = sorted(
            self.rt.source.resolutions(end), key=lambda r: (r.resolved_at, r.market_id)
        )
        with session_scope(self.rt.engine) as session:
            self._offered = set(
                session.exec(
                    select(RoundMarketRow.market_id)
                    .join(RoundRow, col(RoundRow.id) == col(RoundMarketRow.round_id))
                    .where(RoundRow.cohort_id == self.rt.cohort_id)
                ).all()
            )
            session.execute(
                update(CohortRow)
                .where(col(CohortRow.id) == self.rt.cohort_id, col(CohortRow.status) == "pending")
                .values(status="running", started_at=self.rt.start)
            )

    def _due_resolutions(self, at: datetime) -> list[Resolution]:
        due = []
        while (
            self._resolved_upto < len(self._resolutions)
            and self._resolutions[self._resolved_upto].resolved_at <= at
        ):
            due.append(self._resolutions[self._resolved_upto])
            self._resolved.add(due[-1].market_id)
            self._resolved_upto += 1
        return due

    def _flush(self) -> None:
        """Write the buffered resolutions and marks in a transaction of their own (``write``).

        Before a settlement: a settlement that cannot be stored as staged reloads its holders'
        ledgers from the database (``settlement._settle_together``), which must then hold their
        latest marks already."""
        if self._pending_marks or self._pending_resolutions or self._pending_prices:
            with session_scope(self.rt.engine):
                pass

    def write(self, session: Session) -> None:
        """``WritePrelude``: the buffered resolutions and marks, first in the replay's next write
        transaction; they leave the buffer once it commits (``written``)."""
        self._writing = (len(self._pending_marks), len(self._pending_resolutions), len(self._pending_prices))
        write_resolutions(session, self._pending_resolutions, count=False)
        store_points(session, self._pending_prices)
        if self._pending_marks:
            persist_marks(session, self.rt, self._pending_marks, at=self._marked_until)

    def written(self) -> None:
        marks, resolutions, prices = self._writing
        del self._pending_marks[:marks]
        del self._pending_prices[:prices]
        del self._pending_resolutions[:resolutions]
        self._writing = (0, 0, 0)

    def _last_mark(self) -> datetime | None:
        with session_scope(self.rt.engine, write=False) as session:
            query = select(func.max(PortfolioSnapshotRow.marked_at)).where(
                PortfolioSnapshotRow.cohort_id == self.rt.cohort_id
            )
            value: datetime | None = session.exec(query).one()
        return value

    def _round_markets(self, index: int) -> set[str]:
        with session_scope(self.rt.engine, write=False) as session:
            return set(session.exec(_ROUND_MARKETS, params={"cohort_id": self.rt.cohort_id, "index": index}))

    def _cohort_status(self) -> str:
        """Read before every round: the status alone (not the whole row and its frozen config)."""
        with session_scope(self.rt.engine, write=False) as session:
            status = session.exec(_COHORT_STATUS, params={"cohort_id": self.rt.cohort_id}).first()
            return status or "missing"


# Read at every round, built once (why: ``round_store.ROUND_AT_INDEX``).
_ROUND_MARKETS = (
    select(RoundMarketRow.market_id)
    .join(RoundRow, col(RoundRow.id) == col(RoundMarketRow.round_id))
    .where(col(RoundRow.cohort_id) == bindparam("cohort_id"), col(RoundRow.round_index) == bindparam("index"))
)
_COHORT_STATUS = select(CohortRow.status).where(col(CohortRow.id) == bindparam("cohort_id"))


def _steps_to_reach(span: timedelta, every: timedelta) -> int:
    """How many steps of ``every`` it takes to reach ``span`` (rounded up)."""
    return -(-span // every)


async def replay_cohort(
    engine: Engine,
    cohort_id: str,
    source: MarketSource | None = None,
    *,
    environ: Mapping[str, str],
    wall_clock: Clock,
    progress: Progress | None = None,
    lease_ttl: timedelta = RUN_LEASE_TTL,
    round_runner: RoundRunner = run_round,
    synchronous_commit: bool = True,
) -> ReplayResult:
    """Run (or resume) a replay cohort to its end and record the run in ``job_run``.

    ``source``: the cohort's own dataset unless given (see ``load_runtime``). The LLM agents' HTTP
    clients live exactly as long as the run. ``lease_ttl``: see ``replay_lease``. ``round_runner``:
    ``run_round`` (in this process) or ``planner.plan_round`` (one unit per agent, for workers).
    ``synchronous_commit=False`` (``ARENA_REPLAY_SYNCHRONOUS_COMMIT=off``): the replay's own writes
    on PostgreSQL commit without waiting for the disk (``relaxed_commits``); a server crash may
    lose its last commits, which the resumed replay redoes. Its lease and ``job_run`` row keep
    durable commits.
    """
    started = wall_clock.now()
    writes = engine if synchronous_commit else relaxed_commits(engine)
    with replay_lease(engine, cohort_id, wall_clock, lease_ttl):
        result = await _run_leased(
            writes,
            cohort_id,
            source,
            environ=environ,
            wall_clock=wall_clock,
            progress=progress,
            round_runner=round_runner,
        )
    _record_run(engine, result, started, wall_clock.now())
    return result


async def _run_leased(
    engine: Engine,
    cohort_id: str,
    source: MarketSource | None,
    *,
    environ: Mapping[str, str],
    wall_clock: Clock,
    progress: Progress | None,
    round_runner: RoundRunner,
) -> ReplayResult:
    async with AgentHttpClients() as clients:
        rt = load_runtime(
            engine,
            cohort_id,
            source=source,
            environ=environ,
            new_http_client=clients.new_client,
            lease_clock=wall_clock,
        )
        return await ReplayRunner(rt, progress=progress, round_runner=round_runner).run()


def _record_run(engine: Engine, result: ReplayResult, started: datetime, finished: datetime) -> None:
    """One ``job_run`` row per replay run: not ok when a round failed for every agent."""
    failed = [r.round_index for r in result.failed_rounds]
    outcome = (
        "completed"
        if result.completed
        else result.stopped
        or f"{result.open_positions} positions still open ({len(result.stale)} of them stale)"
    )
    message = f"{len(result.rounds)} rounds run, {outcome}" + (
        f"; rounds where every agent failed: {failed}" if failed else ""
    )
    stale = [s.describe(result.end or started) for s in result.stale]
    with session_scope(engine) as session:
        session.add(
            JobRunRow(
                job="replay",
                scope=result.cohort_id,
                started_at=started,
                finished_at=finished,
                ok=not failed,
                message=message,
                details_json={"failed_rounds": failed, "stale": stale},
            )
        )
    if failed:
        log.error("replay of cohort %s: %s", result.cohort_id, message)
