"""Per-unit costs of the live jobs, for sizing workers and PostgreSQL (docs/scale-out.md).

A live cohort of 100 baseline agents on 1,000 synced markets (the fake Polymarket on loopback),
with eight daily rounds played so agents hold positions (each round offers the default 50
markets, or ``ARENA_BENCH_OFFERED``: more offered markets, more positions); then the marks of one instant, run
alternately in-process (``mark_cohort``, the floor) and as a queued unit (enqueue, take under a
lease, run through the lease-fenced engine, fenced finish), prices moved and re-synced before
each. Prints, per instant: client CPU, wall, and the CPU of this database's PostgreSQL backends
(read from ``/proc``, so the server's share is counted, not guessed). Never asserts on time;
asserts that every instant marked every agent.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from sqlalchemy import Engine, text
from sqlmodel import Session

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db.engine import make_engine, session_scope
from arena.db.migrate import upgrade
from arena.engine.live import jobs as live
from arena.engine.runtime.cohort import load_runtime
from arena.engine.runtime.sources import open_source
from arena.sync.types import SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from arena.workers import queue
from arena.workers.host import UnitContext
from arena.workers.units import run_marks
from markets.types import Venue
from tests.benchmarks.results import Figure, record
from tests.fakes.polymarket_server import FakePolymarket
from tests.fakes.venue_gate import move_prices
from tests.workers import ON_POSTGRES

pytestmark = [pytest.mark.benchmark, ON_POSTGRES]
AGENTS, MARKETS, ROUNDS, INSTANTS = 100, 1_000, 8, 10
OFFERED = int(os.environ.get("ARENA_BENCH_OFFERED", "50"))  # markets a round offers
KINDS = ("random", "favorite", "contrarian", "kelly", "half", "crowd")
START = datetime(2026, 8, 21, tzinfo=UTC)
TTL = timedelta(seconds=30)


@pytest.fixture
def pg(db_url: str) -> Iterator[Engine]:
    upgrade(db_url)
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def _sync(engine: Engine, clock: SimulatedClock, url: str) -> None:
    settings = SyncSettings(top_n=MARKETS, history_days=0, max_days_to_close=None)

    async def main() -> None:
        await sync_venue(engine, clock, Venue.POLYMARKET, settings, urls=VenueUrls(gamma=url, clob=url))

    anyio.run(main)


def _server_cpu(engine: Engine) -> float:
    """CPU seconds used so far by this database's PostgreSQL backends (utime + stime)."""
    with Session(engine) as session:
        pids = session.execute(
            text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        ).scalars()
        total = 0
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            total += int(fields[11]) + int(fields[12])
    return total / 100  # clock ticks


def _measured(engine: Engine, work: object) -> tuple[float, float, float]:
    """(client CPU, wall, server CPU) of ``work()``."""
    server, cpu, wall = _server_cpu(engine), time.process_time(), time.perf_counter()
    work()  # type: ignore[operator]
    return time.process_time() - cpu, time.perf_counter() - wall, _server_cpu(engine) - server


def test_marks_of_one_instant_in_process_and_as_a_unit(pg: Engine) -> None:
    clock = SimulatedClock(START)
    with FakePolymarket() as fake:
        fake.populate(MARKETS)
        _sync(pg, clock, fake.url)
        config = parse_config(
            {
                "name": "sizing",
                "mode": "live",
                "venue": "polymarket",
                "start": (START + timedelta(minutes=1)).isoformat(),
                "marks": {"every": "1h"},
                "universe": {"max_markets": OFFERED},
                "schedule": {"every": "1d", "rounds": ROUNDS + 1},
                "agents": [{"name": f"a{i}", "kind": KINDS[i % len(KINDS)]} for i in range(AGENTS)],
            }
        )
        cohort = launch(pg, config, source=open_source(config, pg), environ={}, clock=clock).cohort_id
        for day in range(ROUNDS):
            if day:  # fresh prices before each round's time (a round reads them as of its time)
                clock.set(START + timedelta(days=day))
                move_prices(fake)
                _sync(pg, clock, fake.url)
            clock.set(START + timedelta(days=day, minutes=2))
            live.rounds_job(pg, clock, environ={})
        rows: dict[str, list[tuple[float, float, float]]] = {"in-process": [], "unit": []}
        for i in range(INSTANTS):
            clock.set(START + timedelta(days=ROUNDS - 1, hours=1 + i, minutes=5))
            move_prices(fake)
            _sync(pg, clock, fake.url)
            how = "in-process" if i % 2 == 0 else "unit"
            if how == "in-process":
                figures = _measured(pg, lambda: live.mark_cohort(pg, cohort, clock, environ={}))
            else:
                figures = _measured(pg, lambda: _as_unit(pg, cohort, clock))
            rows[how].append(figures)
            assert not live.marks_due(pg, cohort, clock.now())  # every agent marked
        rt = load_runtime(pg, cohort, environ={}, with_bettors=False)
        positions = sum(len(s.book.ledger.open_positions()) for s in rt.agents)
    floor = statistics.median(f[1] for f in rows["in-process"])
    unit = statistics.median(f[1] for f in rows["unit"])
    figures = [
        Figure(
            f"marks of one instant, {how}, median {name}", statistics.median(r[k] for r in runs) * 1000, "ms"
        )
        for how, runs in rows.items()
        for k, name in enumerate(("client CPU", "wall", "PostgreSQL CPU"))
    ]
    figures.append(Figure("marks of one instant as a unit, wall", unit * 1000, "ms", floor=floor * 1000))
    figures += [
        Figure(f"bytes a `{table}` row with its indexes", size / max(count, 1), "B")
        for table, count, size in _table_sizes(pg)
    ]
    record(
        "job_units",
        measures=f"the marks of one instant ({AGENTS} agents, {positions} open positions, {MARKETS} markets) "
        "in-process and as a queued unit, PostgreSQL",
        command="pytest tests/benchmarks/test_bench_job_units.py -s -m benchmark -k marks",
        figures=figures,
    )


def _table_sizes(engine: Engine) -> list[tuple[str, int, int]]:
    """(table, rows, bytes on disk with indexes and TOAST) of the tables a live study grows."""
    tables = ("market_snapshot", "decision", "fill", "position", "portfolio_snapshot", "work_unit")
    with Session(engine) as session:
        return [
            (
                table,
                int(session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()),  # noqa: S608
                int(session.execute(text(f"SELECT pg_total_relation_size('{table}')")).scalar_one()),
            )
            for table in tables
        ]


def _as_unit(engine: Engine, cohort: str, clock: SimulatedClock) -> None:
    """The queue's whole path for one marks unit, in this process: enqueue, take, run, finish."""
    unit, _ = queue.enqueue(engine, queue.MARKS, cohort, clock.now(), cohort_id=cohort)
    lease = queue.take(engine, "bench", clock.now(), TTL)
    assert lease is not None and lease.unit_id == unit
    run_marks(UnitContext(engine, lease, clock, {}, TTL))
    assert queue.finish(engine, lease, clock.now())


def test_the_queue_path_alone(pg: Engine) -> None:
    """What a unit adds whatever its work: enqueue, take under a lease, one fenced write (the
    check a unit's commit makes), fenced finish; 200 units of a venue's sync kind, no work."""
    clock = SimulatedClock(START)
    n = 200
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(n):
        queue.enqueue(pg, queue.SYNC, f"venue-{i}", clock.now())
        lease = queue.take(pg, "bench", clock.now(), TTL)
        assert lease is not None
        ctx = UnitContext(pg, lease, clock, {}, TTL)
        with session_scope(ctx.fenced):
            pass  # an empty write unit: only the lease check before its commit
        assert queue.finish(pg, lease, clock.now())
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    record(
        "queue_path",
        measures="the queue's path of one unit with no work (enqueue, take, fenced write, finish)",
        command="pytest tests/benchmarks/test_bench_job_units.py -s -m benchmark -k queue_path",
        figures=[
            Figure("client CPU a unit", cpu / n * 1000, "ms"),
            Figure("wall a unit", wall / n * 1000, "ms"),
        ],
    )
