"""One replay per cohort at a time: a second runner is refused with the holder's host and pid."""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from arena.cli import app
from arena.core.clock import SimulatedClock
from arena.db import leases
from arena.db.engine import make_engine
from arena.engine.replay.lease import RUN_LEASE_TTL, CohortBusy, lease_name, replay_lease
from tests.engine.helpers import tiny_dataset

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_second_runner_is_refused_and_named(engine: Engine) -> None:
    clock = SimulatedClock(NOW)
    with replay_lease(engine, "c1", clock):
        with pytest.raises(CohortBusy) as caught, replay_lease(engine, "c1", clock):
            pass
        assert str(caught.value) == (
            f"cohort c1 is being replayed by pid {os.getpid()} on host {socket.gethostname()}; "
            "wait for it to finish or stop it"
        )
        with replay_lease(engine, "c2", clock):  # another cohort is free
            pass
    with replay_lease(engine, "c1", clock):  # released on exit: free at once
        pass


def test_a_holder_that_died_on_this_host_is_taken_over_at_once(engine: Engine) -> None:
    # pid 2**22 + 1 is above Linux's pid_max, so no process has it: the holder is gone.
    dead = f"{socket.gethostname()}:{2**22 + 1}:feed"
    assert leases.try_acquire(engine, dead, NOW, RUN_LEASE_TTL, name=lease_name("c1"))
    with replay_lease(engine, "c1", SimulatedClock(NOW)) as owner:
        held = leases.holder(engine, name=lease_name("c1"))
        assert held is not None and held.owner == owner != dead


def test_a_holder_on_another_host_waits_for_its_lease(engine: Engine) -> None:
    other = "elsewhere:123:feed"
    assert leases.try_acquire(engine, other, NOW, RUN_LEASE_TTL, name=lease_name("c1"))
    with (
        pytest.raises(CohortBusy, match="pid 123 on host elsewhere"),
        replay_lease(engine, "c1", SimulatedClock(NOW)),
    ):
        pass
    with replay_lease(engine, "c1", SimulatedClock(NOW + RUN_LEASE_TTL * 2)):  # expired: taken
        pass


def test_the_cli_says_so_in_one_line_and_exits_2(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    dataset = tiny_dataset(tmp_path / "data")
    config = tmp_path / "c.toml"
    config.write_text(
        f'name = "busy"\ndataset = "{dataset}"\n[schedule]\nevery = "7d"\nrounds = 1\n'
        '[[agents]]\nname = "hold"\nkind = "hold"\n',
        encoding="utf-8",
    )
    runner = CliRunner()
    launched = runner.invoke(
        app, ["cohort", "launch", str(config), "--id", "busy-1", "--database-url", f"sqlite:///{db}"]
    )
    assert launched.exit_code == 0, launched.output
    engine = make_engine(f"sqlite:///{db}")
    with replay_lease(engine, "busy-1", SimulatedClock(datetime.now(UTC))):
        result = runner.invoke(app, ["replay", "--cohort", "busy-1", "--database-url", f"sqlite:///{db}"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: cohort busy-1 is being replayed by pid {os.getpid()} on host {socket.gethostname()}; "
        "wait for it to finish or stop it"
    )
