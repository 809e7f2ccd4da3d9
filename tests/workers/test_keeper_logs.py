"""What a worker's lease keeper logs when a renewal fails: one line for a lost connection (a
database cut logs every quarter lease until it ends), the traceback for a bug."""

from __future__ import annotations

import logging
import socket
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine

from arena.core.clock import SimulatedClock
from arena.db.engine import make_engine
from arena.workers.keeper import LeaseKeeper
from arena.workers.queue import Lease
from tests.workers import ON_POSTGRES

LEASE = Lease(unit_id=7, kind="marks", key="c", cohort_id="c", token="t", attempt=1)


def _records(engine: Engine, caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The keeper's records of about four renewals against ``engine``."""
    clock = SimulatedClock(datetime(2025, 1, 1, tzinfo=UTC))
    with caplog.at_level(logging.WARNING, logger="arena.workers.keeper"):
        keeper = LeaseKeeper(
            engine, LEASE, worker="w", clock=clock, ttl=timedelta(seconds=0.2), on_lost=lambda: None
        )
        with keeper:
            time.sleep(0.3)
    assert not keeper.lost.is_set()  # a failed renewal is not a lost lease
    return [r for r in caplog.records if r.name == "arena.workers.keeper"]


def _refused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed on return: nothing listens there


def test_a_renewal_cut_off_from_the_database_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    engine = make_engine(f"postgresql+psycopg://postgres@127.0.0.1:{_refused_port()}/gone")
    try:
        records = _records(engine, caplog)
    finally:
        engine.dispose()
    assert records, "no renewal was attempted"
    for record in records:
        assert record.levelno == logging.WARNING and record.exc_info is None
        message = record.getMessage()
        assert message.startswith("renewing the lease of unit 7 failed: database unreachable (")
        assert "\n" not in message and "refused" in message


@ON_POSTGRES
def test_a_renewal_that_fails_for_another_reason_logs_its_traceback(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    engine = make_engine(db_url)  # an empty schema: no work_unit table, a bug rather than an outage
    try:
        records = _records(engine, caplog)
    finally:
        engine.dispose()
    assert records and all(r.levelno == logging.ERROR and r.exc_info for r in records)
    assert records[0].getMessage() == "renewing the lease of unit 7 failed"
