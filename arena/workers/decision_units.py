"""Decision units: one agent's decision in one round, many run at once by one worker.

``arena serve`` with workers plans a due round as one unit per agent (``arena.scheduling.planner``).
A worker that takes one decision unit keeps taking more (up to ``slots`` at once, in one
transaction per batch) and runs them concurrently in one event loop, as ``run_round`` asks a
round's agents concurrently in one process: an LLM agent's unit is mostly a wait on its provider.

Each unit runs ``unit_decision.decide_one`` (the in-process round's own code: same snapshot, claim, ask,
validate, fills in one commit) on the cohort's runtime with its engine fenced by the unit's lease
(``fence.UnitFence``): every write of the unit, the decision's commit above all, checks in its own
transaction that the unit is still this worker's. The decision's claim fences it a second time.
One thread renews every running unit's lease in one statement and cancels a unit whose lease is
gone. The runtime (config, market source, bettors, ledgers) is loaded once per cohort per batch;
each unit refreshes its agent's ledger from the fill log before asking.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import replace

from arena.engine.rounds.run import round_time
from arena.engine.rounds.unit_decision import BUSY, OpenedRound, decide_one, open_planned_round
from arena.engine.runtime.agent_http import AgentHttpClients
from arena.engine.runtime.cohort import CohortRuntime, load_runtime
from arena.engine.store.claims import new_token
from arena.workers import queue, roster
from arena.workers.backoff import log_renewal_failure
from arena.workers.fence import LeaseLost, UnitFence
from arena.workers.host import UnitHost
from arena.workers.queue import DECISION, Lease, Outcome

log = logging.getLogger(__name__)


def run_decision_units(worker: UnitHost, first: Lease) -> None:
    """The worker's runner for ``decision`` units: ``first`` and every decision unit it can take
    while they keep coming."""
    asyncio.run(_Batch(worker).run(first))


class _Batch:
    def __init__(self, worker: UnitHost) -> None:
        self.worker = worker
        self.settings = worker.settings
        self.running: dict[asyncio.Task[None], Lease] = {}
        self.lost: set[int] = set()
        self.lock = threading.Lock()
        self.runtimes: dict[str, CohortRuntime] = {}
        self.rounds: dict[tuple[str, int], OpenedRound] = {}
        self.taken = 0
        self.done = 0

    async def run(self, first: Lease) -> None:
        loop = asyncio.get_running_loop()
        stop_renewing = threading.Event()
        renewer = threading.Thread(
            target=self._renew, args=(loop, stop_renewing), name="decision leases", daemon=True
        )
        async with AgentHttpClients() as clients:
            self.clients = clients
            self._start(first)
            renewer.start()
            try:
                while self.running:
                    if not self.worker.stopping and len(self.running) < self.settings.slots:
                        for lease in self.worker.with_database(lambda: self._take_more()):
                            self._start(lease)
                    await asyncio.wait(
                        list(self.running),
                        timeout=self.settings.poll.total_seconds(),
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    with self.lock:
                        for task in [t for t in self.running if t.done()]:
                            del self.running[task]
            finally:
                stop_renewing.set()
                renewer.join()
        w = self.worker
        w.with_database(lambda: roster.beat(w.engine, w.name, w.clock.now(), None, finished=self.done))
        w.say(f"ran {self.taken} decision unit(s), from unit {first.unit_id}; {self.done} done")

    def _take_more(self) -> list[Lease]:
        """Up to the free slots, but no more than this worker's share of the available units
        (split between the live workers), so a round's units spread over the fleet."""
        w = self.worker
        now = w.clock.now()
        available = queue.available(w.engine, now, kinds=(DECISION,))
        if not available:
            return []
        share = -(-available // max(roster.live_workers(w.engine, now), 1))
        return queue.take_many(
            w.engine,
            w.name,
            now,
            self.settings.lease_ttl,
            limit=min(self.settings.slots - len(self.running), share),
            kinds=(DECISION,),
        )

    def _start(self, lease: Lease) -> None:
        self.taken += 1
        if lease.attempt > 1:
            self.worker.say(
                f"took unit {lease.unit_id}: decision of agent {lease.agent_id} in round "
                f"{lease.round_index} of cohort {lease.cohort_id} (attempt {lease.attempt})"
            )
        task = asyncio.get_running_loop().create_task(self._one(lease))
        with self.lock:
            self.running[task] = lease

    def _renew(self, loop: asyncio.AbstractEventLoop, stop: threading.Event) -> None:
        """Every quarter lease: renew all running units at once; cancel those no longer ours."""
        w = self.worker
        while not stop.wait((self.settings.lease_ttl / 4).total_seconds()):
            with self.lock:
                held = dict(self.running)
            try:
                kept = queue.renew_many(w.engine, list(held.values()), w.clock.now(), self.settings.lease_ttl)
                first = next(iter(held.values()), None)
                roster.beat(w.engine, w.name, w.clock.now(), first.unit_id if first else None)
            except Exception as exc:  # a database blip: the next renewal retries well within the lease
                log_renewal_failure(log, f"renewing {len(held)} decision leases", exc)
                continue
            for task, lease in held.items():
                if lease.unit_id not in kept and not task.done():
                    with self.lock:
                        self.lost.add(lease.unit_id)
                    loop.call_soon_threadsafe(task.cancel)

    def _runtime(self, cohort_id: str) -> CohortRuntime:
        rt = self.runtimes.get(cohort_id)
        if rt is None:
            w = self.worker
            rt = load_runtime(
                w.engine,
                cohort_id,
                environ=w.environ,
                new_http_client=self.clients.new_client,
                lease_clock=w.clock,
            )
            self.runtimes[cohort_id] = rt
        return rt

    def _opened(self, rt: CohortRuntime, index: int) -> OpenedRound:
        """The round as its planner opened it, read and checked (snapshot hash) once per batch."""
        key = (rt.cohort_id, index)
        if key not in self.rounds:
            self.rounds[key] = open_planned_round(
                rt, index, round_time(rt.start, rt.config.schedule.every, index)
            )
        return self.rounds[key]

    async def _one(self, lease: Lease) -> None:
        """Run one unit and finish it under its lease; see ``Worker.run_one`` for the faults."""
        w = self.worker
        assert lease.cohort_id is not None and lease.round_index is not None and lease.agent_id is not None
        started = w.clock.now()
        try:
            rt = self._runtime(lease.cohort_id)
            # The unit's lease fences every write; a claim taken by the unit's previous holder is
            # taken over once the unit's lease expired (claims leases of one unit lease).
            unit_rt = replace(rt, engine=UnitFence(lease).guard(w.engine), lease=self.settings.lease_ttl)
            status = await decide_one(
                unit_rt, self._opened(unit_rt, lease.round_index), lease.agent_id, new_token()
            )
        except asyncio.CancelledError:
            if lease.unit_id in self.lost:
                w.unit_raised(lease, LeaseLost())
                return
            raise
        except Exception as exc:  # other units of the batch run on: no wait for the database
            w.unit_raised(lease, exc, wait_for_database=False)
            return
        if status == BUSY:  # the claim of a runner that may still live: wait out its lease
            w.give_back(
                lease, f"decision {lease.agent_id} of round {lease.round_index} is claimed by another runner"
            )
            return
        seconds = (w.clock.now() - started).total_seconds()
        if await asyncio.to_thread(w.finish, lease, Outcome(None), seconds, quiet=True):
            self.done += 1
        log.info("unit %s: decision %s in %.1f s", lease.unit_id, status, seconds)
