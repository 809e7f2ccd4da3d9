"""A claim whose owner process is gone from this host is taken over at once, not after the lease."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.db.engine import session_scope
from arena.db.models import DecisionRow
from arena.engine.rounds.run import run_round
from arena.engine.rounds.universe import select_universe
from arena.engine.store.claims import new_token, owner_is_dead
from arena.engine.store.round_store import open_round
from tests.engine.helpers import config, day, launch_cohort, runtime, tiny_dataset
from tests.engine.test_claims import _buys


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_owner_liveness_is_judged_only_for_this_host() -> None:
    host = socket.gethostname()
    assert owner_is_dead(f"{host}:{_dead_pid()}:ab12")
    assert not owner_is_dead(new_token())  # this very process
    assert not owner_is_dead(f"{host}:{os.getppid()}:ab12")  # alive
    assert not owner_is_dead(f"another-host:{_dead_pid()}:ab12")  # other hosts: the lease decides
    assert not owner_is_dead("not-a-token")


def test_a_dead_owners_claims_are_taken_over_before_the_lease_ends(engine: Engine, tmp_path: Path) -> None:
    agents = [{"name": "fav", "kind": "favorite"}, {"name": "random", "kind": "random"}]
    cohort_id, source = launch_cohort(engine, config(tiny_dataset(tmp_path / "data"), agents))
    rt = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    universe = select_universe(rt.source.snapshot(day(0)), rt.config.universe)
    crashed = f"{socket.gethostname()}:{_dead_pid()}:ab12"
    with session_scope(engine) as session:
        round_id = open_round(session, rt.cohort_id, 0, day(0), universe, started_at=day(0))
        session.add_all(
            DecisionRow(
                round_id=round_id,
                agent_id=a.id,
                cohort_id=cohort_id,
                claim_token=crashed,
                status="claimed",
                claimed_at=rt.lease_clock.now(),  # a fresh lease: only liveness can free it
            )
            for a in rt.agents
        )
    report = asyncio.run(run_round(rt, 0, day(0)))
    assert report.status == "done"
    with Session(engine) as session:
        decisions = session.exec(select(DecisionRow).where(DecisionRow.round_id == round_id)).all()
    assert {d.status for d in decisions} == {"done"}
    assert crashed not in {d.claim_token for d in decisions}
    assert len(_buys(engine)) == 2  # both agents bet once each: taken over, executed once
