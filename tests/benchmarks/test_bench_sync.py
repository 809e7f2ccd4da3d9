"""Benchmark: ``arena markets sync`` of 10,000 Polymarket markets (100 per keyset page) from the fake
Polymarket, run in its own process so the server does not share the client's interpreter.

Prints: first sync, no-change re-sync (and its speed-up over the first: target ≥ 5×), heartbeat
re-sync (after ``refresh_after``) and a 10,000-market ``DbMarketSource.snapshot``, on SQLite and
PostgreSQL, each as wall and CPU time; and the peak Python memory of a first sync (tracemalloc) plus
the peak RSS of a process doing nothing but that sync. Never asserts on time.

The floor of a re-sync, measured in the same run: the same requests in the same pattern (every
Gamma page in turn, and the CLOB ``/midpoints`` and ``/books`` batches of each 500 tokens sent
while the paging goes on, as many at once as the sync sends) made with bare httpx and
JSON-decoded, nothing else. The fake venue's own CPU time is printed beside both,
to show whether the server, not the client, sets the pace.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import anyio
import httpx
import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, select

from arena.core.clock import SimulatedClock
from arena.db.market_source import DbMarketSource
from arena.db.models import MarketRow, MarketSnapshotRow
from arena.sync.types import SyncReport, SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from markets.types import Venue
from tests.benchmarks.own_process import run_measured
from tests.benchmarks.results import Figure, record

pytestmark = pytest.mark.benchmark
T = TypeVar("T")
MARKETS = 10_000
SETTINGS = SyncSettings(top_n=MARKETS, history_days=0, max_days_to_close=None)
START = datetime(2026, 8, 21, 12, tzinfo=UTC)


@dataclass(frozen=True)
class FakeVenue:
    url: str
    pid: int

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (user + system, from ``/proc``)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Timed:
    wall: float
    cpu: float  # this process's
    server_cpu: float  # the fake venue's, meanwhile

    def __str__(self) -> str:
        return f"{self.wall:.2f}s wall, {self.cpu:.2f}s CPU (server {self.server_cpu:.2f}s CPU)"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeVenue]:
    """The fake Polymarket with 10,000 markets, in a child process (Ctrl-C stops it)."""
    command = [sys.executable, "-m", "tests.fakes.polymarket_server", "--markets", str(MARKETS)]
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        yield FakeVenue(child.stdout.readline().strip(), child.pid)
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)


def timed(fake: FakeVenue | None, work: Callable[[], T]) -> tuple[T, Timed]:
    wall, cpu = time.perf_counter(), time.process_time()
    server = fake.cpu_seconds() if fake else 0.0
    result = work()
    server = fake.cpu_seconds() - server if fake else 0.0
    return result, Timed(time.perf_counter() - wall, time.process_time() - cpu, server)


def run(engine: Engine, clock: SimulatedClock, url: str) -> SyncReport:
    async def main() -> SyncReport:
        return await sync_venue(
            engine, clock, Venue.POLYMARKET, SETTINGS, urls=VenueUrls(gamma=url, clob=url)
        )

    return anyio.run(main)


def fetch_floor(url: str) -> int:
    """The requests of a sync of ``url`` with bare httpx, each body JSON-decoded, in the sync's
    pattern: Gamma pages one after another, and every 500 tokens their ``/midpoints`` and
    ``/books`` requests at once, ``SETTINGS.concurrency`` in flight, while the paging goes on.
    Returns the number of markets listed."""

    async def main() -> int:
        filters = {"closed": "false", "ascending": "false", "order": "volumeNum", "liquidity_num_min": "1000"}
        listed, waiting = 0, []
        limit = anyio.Semaphore(SETTINGS.concurrency)
        async with httpx.AsyncClient() as client, anyio.create_task_group() as group:

            async def post(path: str, batch: list[str]) -> None:
                async with limit:
                    json.loads((await client.post(url + path, json=[{"token_id": t} for t in batch])).content)

            def price(batch: list[str]) -> None:
                for path in ("/midpoints", "/books"):
                    group.start_soon(post, path, batch)

            cursor = None
            while True:
                query: dict[str, str | int] = {**filters, "limit": 100}
                if cursor:
                    query["after_cursor"] = cursor
                body = json.loads((await client.get(f"{url}/markets/keyset", params=query)).content)
                listed += len(body["markets"])
                waiting += [t for m in body["markets"] for t in json.loads(m["clobTokenIds"])]
                while len(waiting) >= 500:
                    price(waiting[:500])
                    del waiting[:500]
                if not (cursor := body.get("next_cursor")):
                    break
            if waiting:
                price(waiting)
        return listed

    return anyio.run(main)


def rows(engine: Engine) -> tuple[int, int]:
    with Session(engine) as session:
        markets = session.exec(select(func.count()).select_from(MarketRow)).one()
        return markets, session.exec(select(func.count()).select_from(MarketSnapshotRow)).one()


def test_bench_sync_10k_markets(engine: Engine, fake: FakeVenue) -> None:
    backend = engine.dialect.name
    clock = SimulatedClock(START)
    first, first_t = timed(fake, lambda: run(engine, clock, fake.url))
    assert first.selected == MARKETS and first.problems == [] and rows(engine) == (MARKETS, 2 * MARKETS)
    clock.advance(timedelta(minutes=1))
    same, same_t = timed(fake, lambda: run(engine, clock, fake.url))
    assert (same.markets_written, same.snapshots_written) == (0, 0) and rows(engine) == (MARKETS, 2 * MARKETS)
    assert same.unchanged == MARKETS  # skipped by their stamps, not compared field by field
    clock.advance(timedelta(minutes=1))
    alone = fresh_process_resync(engine, clock.now(), fake)
    listed, floor_t = timed(fake, lambda: fetch_floor(fake.url))
    assert listed == MARKETS
    clock.advance(SETTINGS.refresh_after)
    beat, beat_t = timed(fake, lambda: run(engine, clock, fake.url))
    assert beat.snapshots_written == 2 * MARKETS
    source = DbMarketSource(engine, [Venue.POLYMARKET])
    snapshot, snapshot_t = timed(None, lambda: source.snapshot(clock.now()))
    assert len(snapshot.entries) == MARKETS
    record(
        f"sync_{backend}",
        measures=f"`arena markets sync` of {MARKETS:,} Polymarket markets from the fake venue ({backend})",
        command="pytest tests/benchmarks/test_bench_sync.py -s -m benchmark -k 10k",
        figures=[
            Figure("first sync, wall", first_t.wall, "s", floor=floor_t.wall),
            Figure(
                "no-change re-sync, wall",
                same_t.wall,
                "s",
                floor=floor_t.wall,
                target="≥ 5× faster than the first",
                met=first_t.wall >= 5 * same_t.wall,
            ),
            Figure("no-change re-sync in a fresh process, wall", alone.wall, "s", floor=floor_t.wall),
            Figure("heartbeat re-sync, wall", beat_t.wall, "s", floor=floor_t.wall),
            Figure(f"a {MARKETS:,}-market snapshot", snapshot_t.wall, "s"),
        ],
    )


RESYNC_CHILD = """
import json, sys, time
from datetime import datetime
from tests.benchmarks.test_bench_sync import run
from arena.core.clock import SimulatedClock
from arena.db.engine import make_engine

engine = make_engine(sys.argv[1])
wall, cpu = time.perf_counter(), time.process_time()
report = run(engine, SimulatedClock(datetime.fromisoformat(sys.argv[3])), sys.argv[2])
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
assert report.unchanged == report.selected and report.markets_written == report.snapshots_written == 0
print(json.dumps({"wall": wall, "cpu": cpu}))
"""


def fresh_process_resync(engine: Engine, at: datetime, fake: FakeVenue) -> Timed:
    """A no-change re-sync at ``at`` in a process of its own (imports not counted): what a
    one-shot ``arena markets sync`` costs, with nothing kept from an earlier sync in the process."""
    url = engine.url.render_as_string(hide_password=False)
    code = f"import sys; sys.argv[1:] = [{url!r}, {fake.url!r}, {at.isoformat()!r}]\n"
    server = fake.cpu_seconds()
    figures = run_measured(code + RESYNC_CHILD)
    return Timed(figures["wall"], figures["cpu"], fake.cpu_seconds() - server)


MEMORY_CHILD = """
import json, sys, time, tracemalloc
from tests.benchmarks.test_bench_sync import START, run
from arena.core.clock import SimulatedClock
from arena.db.engine import make_engine
from arena.db.migrate import upgrade

engine = make_engine(sys.argv[1])
upgrade(engine)
tracemalloc.start()
started = time.perf_counter()
report = run(engine, SimulatedClock(START), sys.argv[2])
seconds = time.perf_counter() - started
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"selected": report.selected, "seconds": seconds, "traced_mib": peak / 2**20}))
"""


def test_bench_sync_memory(tmp_path: Path, fake: FakeVenue) -> None:
    """The first sync in a process of its own, so its peak RSS is the sync's alone."""
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    code = f"import sys; sys.argv[1:] = [{url!r}, {fake.url!r}]\n"
    figures = run_measured(code + MEMORY_CHILD)
    assert figures["selected"] == MARKETS
    record(
        "sync_memory",
        measures=f"the first sync of {MARKETS:,} markets in a process of its own (SQLite)",
        command="pytest tests/benchmarks/test_bench_sync.py -s -m benchmark -k memory",
        figures=[
            Figure("peak Python allocations", figures["traced_mib"], "MiB"),
            Figure("peak RSS", figures["peak_rss_mib"], "MiB"),
        ],
    )
