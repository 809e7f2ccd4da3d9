"""``arena markets sync`` against hostile venues: a one-line error, a non-zero exit, nothing written,
and memory bounded by the limit (``ARENA_VENUE_MAX_BODY_BYTES``), whatever the venue sends.

The venue is a real HTTP server on loopback (``tests.fakes.hostile_server``); the command runs
in-process through the typer app so ``tracemalloc`` sees its peak.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import MarketRow, MarketSnapshotRow
from tests.fakes.hostile_server import Abuse, Bomb, Drip, HostileServer, Huge

LIMIT = 1024 * 1024


def sync_against(abuse: Abuse, database: str, **env: str) -> tuple[int, str, int]:
    """Exit code, output and the peak of Python memory of a Manifold sync against ``abuse``."""
    with HostileServer(abuse) as server:
        tracemalloc.start()
        try:
            result = CliRunner().invoke(
                app,
                ["markets", "sync", "--venue", "manifold", "--manifold-url", server.url],
                env={"ARENA_DATABASE_URL": database, "COLUMNS": "200", **env},
            )
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return result.exit_code, result.output, peak


def stored(database: str) -> tuple[int, int]:
    with Session(make_engine(database)) as session:
        markets = session.exec(select(func.count()).select_from(MarketRow)).one()
        snapshots = session.exec(select(func.count()).select_from(MarketSnapshotRow)).one()
    return markets, snapshots


@pytest.fixture
def database(tmp_path: Path) -> str:
    """A fresh database, after a first sync in this process has imported what a sync imports
    (modules loaded on first use would count in the measured peak)."""
    warm = f"sqlite:///{tmp_path / 'warm.db'}"
    sync_against(Huge(size=10), warm)
    return f"sqlite:///{tmp_path / 'arena.db'}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("abuse", [Bomb(inflated=1024**3), Huge(size=300 * LIMIT, declared=False)], ids=str)
def test_a_body_past_the_limit_ends_the_sync_with_one_line(abuse: Abuse, database: str) -> None:
    code, output, peak = sync_against(abuse, database, ARENA_VENUE_MAX_BODY_BYTES=str(LIMIT))
    assert code == 1, output
    last = output.strip().splitlines()[-1]
    assert last.startswith(
        "error: sync of manifold kept nothing: listing: stopped early after 0 markets: GET "
    )
    assert last.endswith("/v0/markets: response body exceeds the limit of 1,048,576 bytes (decoded)")
    assert stored(database) == (0, 0)
    assert peak < 8 * LIMIT, f"peak {peak:,} bytes"


@pytest.mark.timeout(120)
def test_a_venue_trickling_bytes_is_cut_at_the_request_deadline(database: str) -> None:
    started = time.monotonic()
    code, output, _ = sync_against(Drip(interval=0.2), database, ARENA_VENUE_REQUEST_DEADLINE="1s")
    assert code == 1, output
    assert "no complete answer within the 1s deadline" in output
    assert time.monotonic() - started < 30  # 5 attempts of 1 s and their backoff
    assert stored(database) == (0, 0)


@pytest.mark.timeout(120)
def test_a_sync_that_outlives_its_deadline_writes_nothing(database: str) -> None:
    started = time.monotonic()
    code, output, _ = sync_against(
        Drip(interval=0.2), database, ARENA_SYNC_DEADLINE="2s", ARENA_VENUE_REQUEST_DEADLINE="60s"
    )
    assert code == 1, output
    assert output.strip().splitlines()[-1] == (
        "error: sync of manifold stopped at its deadline of 2s (ARENA_SYNC_DEADLINE) before writing anything"
    )
    assert time.monotonic() - started < 15
    assert stored(database) == (0, 0)


def test_a_bad_limit_in_the_environment_is_one_line(database: str) -> None:
    code, output, _ = sync_against(Huge(size=10), database, ARENA_SYNC_DEADLINE="forever")
    assert code == 2
    assert output.strip().splitlines() == [
        "error: ARENA_SYNC_DEADLINE: expected a positive duration like '7d', '12h', '30m' or '90s', "
        "got 'forever'"
    ]
