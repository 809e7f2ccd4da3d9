"""Benchmark: ``arena markets sync`` of 10,000 Polymarket markets (100 per keyset page) from the fake
Polymarket, run in its own process so the server does not share the client's interpreter.

Prints: first sync, no-change re-sync (and its speed-up over the first: target ≥ 5×), heartbeat
re-sync (after ``refresh_after``) and a 10,000-market ``DbMarketSource.snapshot``, on SQLite and
PostgreSQL; and the peak Python memory of a first sync (tracemalloc) plus the peak RSS of a process
doing nothing but that sync. Never asserts on time.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, select

from arena.clock import SimulatedClock
from arena.db.market_source import DbMarketSource
from arena.db.models import MarketRow, MarketSnapshotRow
from arena.sync.run import SyncReport, SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from markets.types import Venue
from tests.benchmarks.own_process import run_measured

pytestmark = pytest.mark.benchmark
MARKETS = 10_000
SETTINGS = SyncSettings(top_n=MARKETS, history_days=0, max_days_to_close=None)
START = datetime(2026, 8, 21, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def fake_url() -> Iterator[str]:
    """The fake Polymarket with 10,000 markets, in a child process (stdin closing stops it)."""
    command = [sys.executable, "-m", "tests.fakes.polymarket_server", "--markets", str(MARKETS)]
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(
        command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None and child.stdin is not None
        yield child.stdout.readline().strip()
        child.stdin.close()
        child.wait(timeout=30)


def run(engine: Engine, clock: SimulatedClock, url: str) -> tuple[SyncReport, float]:
    async def main() -> SyncReport:
        return await sync_venue(
            engine, clock, Venue.POLYMARKET, SETTINGS, urls=VenueUrls(gamma=url, clob=url)
        )

    started = time.perf_counter()
    report = anyio.run(main)
    return report, time.perf_counter() - started


def rows(engine: Engine) -> tuple[int, int]:
    with Session(engine) as session:
        markets = session.exec(select(func.count()).select_from(MarketRow)).one()
        return markets, session.exec(select(func.count()).select_from(MarketSnapshotRow)).one()


def test_bench_sync_10k_markets(engine: Engine, fake_url: str) -> None:
    backend = engine.dialect.name
    clock = SimulatedClock(START)
    first, first_s = run(engine, clock, fake_url)
    assert first.selected == MARKETS and first.problems == [] and rows(engine) == (MARKETS, 2 * MARKETS)
    clock.advance(timedelta(minutes=1))
    same, same_s = run(engine, clock, fake_url)
    assert (same.markets_written, same.snapshots_written) == (0, 0) and rows(engine) == (MARKETS, 2 * MARKETS)
    assert same.unchanged == MARKETS  # skipped by their stamps, not compared field by field
    clock.advance(SETTINGS.refresh_after)
    beat, beat_s = run(engine, clock, fake_url)
    assert beat.snapshots_written == 2 * MARKETS
    source = DbMarketSource(engine, [Venue.POLYMARKET])
    started = time.perf_counter()
    snapshot = source.snapshot(clock.now())
    snapshot_s = time.perf_counter() - started
    assert len(snapshot.entries) == MARKETS
    print(
        f"\n[bench sync {backend}] {MARKETS} markets, 100/page: first sync {first_s:.1f}s "
        f"({first.markets_written} markets, {first.snapshots_written} snapshots); "
        f"no-change re-sync {same_s:.1f}s (0 rows written, {first_s / same_s:.1f}× faster than the first); "
        f"heartbeat re-sync {beat_s:.1f}s ({beat.snapshots_written} snapshots); "
        f"DbMarketSource.snapshot {snapshot_s:.2f}s"
    )


MEMORY_CHILD = """
import json, sys, time, tracemalloc
from tests.benchmarks.test_bench_sync import START, run
from arena.clock import SimulatedClock
from arena.db.engine import make_engine
from arena.db.migrate import upgrade

engine = make_engine(sys.argv[1])
upgrade(engine)
tracemalloc.start()
report, seconds = run(engine, SimulatedClock(START), sys.argv[2])
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"selected": report.selected, "seconds": seconds, "traced_mib": peak / 2**20}))
"""


def test_bench_sync_memory(tmp_path: Path, fake_url: str) -> None:
    """The first sync in a process of its own, so its peak RSS is the sync's alone."""
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    code = f"import sys; sys.argv[1:] = [{url!r}, {fake_url!r}]\n"
    figures = run_measured(code + MEMORY_CHILD)
    assert figures["selected"] == MARKETS
    print(
        f"\n[bench sync memory] first sync of {MARKETS} markets: peak Python allocations "
        f"{figures['traced_mib']:.0f} MiB (tracemalloc, run took {figures['seconds']:.1f}s under tracing); "
        f"peak RSS of the syncing process {figures['peak_rss_mib']:.0f} MiB"
    )
