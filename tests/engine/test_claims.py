"""Claims: one execution per (round, agent), whoever runs the round and however often."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, update
from sqlmodel import Session, col, select

from arena.db.engine import make_engine, session_scope
from arena.db.models import DecisionRow, FillRow, RoundRow
from arena.engine.rounds.report import RoundReport, close_round
from arena.engine.rounds.run import open_and_claim, run_round
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.store.claims import (
    Claim,
    ClaimLost,
    ClaimResult,
    claim_round,
    finish,
    finish_all,
    new_token,
)
from tests.db.waits import engine_waits, waits
from tests.engine.helpers import config, day, launch_cohort, runtime, tiny_dataset

SLOW = {"kind": "plugin", "path": "tests.engine.bots:SlowBettor", "settings": {"delay": 0.4, "stake": 100}}


def _cohort(engine: Engine, tmp_path: Path) -> tuple[str, object]:
    agents = [{"name": "slow1", **SLOW}, {"name": "slow2", **SLOW}, {"name": "random", "kind": "random"}]
    return launch_cohort(engine, config(tiny_dataset(tmp_path / "data"), agents))


def _buys(engine: Engine) -> dict[int, int]:
    with Session(engine) as session:
        rows = session.exec(
            select(FillRow.agent_id, func.count())
            .where(FillRow.kind == "buy")
            .group_by(col(FillRow.agent_id))
        )
        return dict(rows.all())


def test_two_runners_of_one_round_execute_each_decision_once(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = _cohort(engine, tmp_path)
    url = engine.url.render_as_string(hide_password=False)
    engines = [make_engine(url), make_engine(url)]
    runtimes = [runtime(e, cohort_id, source) for e in engines]  # type: ignore[arg-type]
    start = threading.Barrier(2)
    reports: dict[int, RoundReport] = {}

    def run(i: int) -> None:
        start.wait()
        reports[i] = asyncio.run(run_round(runtimes[i], 0, day(0)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(r.status for r in reports.values()) == [
        "busy",
        "done",
    ]  # they overlapped: one found the claims taken
    with Session(engine) as session:
        decisions = session.exec(select(DecisionRow)).all()
    assert len(decisions) == 3 and {d.status for d in decisions} == {"done"}
    slow_ids = [s.id for s in runtimes[0].agents if s.name.startswith("slow")]
    assert {a: n for a, n in _buys(engine).items() if a in slow_ids} == dict.fromkeys(slow_ids, 1)
    # The runner that lost the race did not move its in-memory ledgers either.
    for rt in runtimes:
        rt.reload()
        assert [s.book.ledger.cash for s in rt.agents if s.name.startswith("slow")] == [9900, 9900]
    for e in engines:
        e.dispose()


def test_rerunning_a_finished_round_executes_nothing(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = _cohort(engine, tmp_path)
    rt = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    first = asyncio.run(run_round(rt, 0, day(0)))
    buys = _buys(engine)
    again = asyncio.run(run_round(runtime(engine, cohort_id, source), 0, day(0)))  # type: ignore[arg-type]
    assert first.status == again.status == "done"
    assert _buys(engine) == buys and len(buys) == 3
    assert again.statuses == first.statuses


def _claimed_decision(rt: CohortRuntime) -> tuple[int, str]:
    """Round 0 claimed by a runner that then 'dies' before finishing; returns (round id, token)."""
    token = new_token()
    with session_scope(rt.engine) as session:
        round_id, claims = _open_and_claim(session, rt, token)
    assert len(claims.claimed) == 3
    return round_id, token


def _open_and_claim(session: Session, rt: CohortRuntime, token: str) -> tuple[int, ClaimResult]:
    """Open round 0 and claim its decisions for every agent under ``token``, in ``session``, for a
    lease of five minutes (the tests take expired claims over ten minutes later)."""
    from arena.engine.rounds.universe import select_universe

    universe = select_universe(rt.source.snapshot(day(0)), rt.config.universe)
    return open_and_claim(session, replace(rt, lease=timedelta(minutes=5)), 0, day(0), universe, token)


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite is in the process: no round trips
def test_opening_and_claiming_a_round_waits_for_postgresql_four_times(engine: Engine, tmp_path: Path) -> None:
    """The round's row and its claims are read back in the pipeline of the inserts before them
    (``pipeline.read_after_sent``), not each in a wait of its own."""
    cohort_id, source = _cohort(engine, tmp_path)
    rt = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    with waits(tmp_path / "trace") as (watch, found), session_scope(rt.engine) as session:
        watch(session)
        _, claims = _open_and_claim(session, rt, new_token())
    assert len(claims.claimed) == 3
    # psycopg's BEGIN (in a pipeline, it waits for it); the markets' and the round's inserts with
    # the round read back; the prices' and the claims' inserts with the claims read back; the
    # COMMIT. Before: the inserts and each read waited apart, six waits.
    assert found == ["Sync", "Sync", "Sync", "Query"]


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite is in the process: no round trips
def test_closing_a_round_waits_for_postgresql_three_times(engine: Engine, tmp_path: Path) -> None:
    """``close_round`` reads the decisions' statuses and the round's row in one wait, and sends
    the round's new status with its COMMIT."""
    cohort_id, source = _cohort(engine, tmp_path)
    rt = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    round_id, _ = _claimed_decision(rt)
    with session_scope(engine) as session:
        session.execute(update(DecisionRow).values(status="done"))
    with engine_waits(engine, tmp_path / "trace") as found:
        report = close_round(rt, round_id, 0, day(0))
    # psycopg's BEGIN (in a pipeline, it waits for it); both reads; the UPDATE with the COMMIT.
    # Before: BEGIN, each read, the UPDATE and the COMMIT waited apart, five waits.
    assert found == ["Sync", "Sync", "Sync"]
    assert report.status == "done" and set(report.statuses.values()) == {"done"}
    with Session(engine) as session:
        stored = session.exec(select(RoundRow.status, RoundRow.finished_at)).one()
    assert stored == ("done", day(0))


def test_live_claims_are_left_alone_and_expired_ones_taken_over(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = _cohort(engine, tmp_path)
    rt = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    round_id, dead = _claimed_decision(rt)
    busy = asyncio.run(run_round(rt, 0, day(0)))
    assert busy.status == "busy" and _buys(engine) == {}
    # The owner's lease runs out (claimed long ago): the next runner takes the claims over.
    with session_scope(engine) as session:
        session.execute(update(DecisionRow).values(claimed_at=rt.lease_clock.now() - timedelta(hours=1)))
    done = asyncio.run(run_round(rt, 0, day(0)))
    assert done.status == "done" and len(_buys(engine)) == 3
    with Session(engine) as session:
        tokens = set(
            session.exec(select(DecisionRow.claim_token).where(DecisionRow.round_id == round_id)).all()
        )
    assert dead not in tokens and len(tokens) == 1


def test_a_runner_whose_claim_was_taken_over_cannot_finish(engine: Engine, tmp_path: Path) -> None:
    from arena.engine.store.claims import Claim

    cohort_id, source = _cohort(engine, tmp_path)
    rt = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    round_id, slow_owner = _claimed_decision(rt)
    later = rt.lease_clock.now() + timedelta(minutes=10)
    with session_scope(engine) as session:
        taken = claim_round(
            session,
            round_id=round_id,
            cohort_id=rt.cohort_id,
            agent_ids=[rt.agents[0].id],
            token=new_token(),
            now=later,
            lease=timedelta(minutes=5),
        )
    (claim,) = taken.claimed.values()
    stale = Claim(claim.decision_id, claim.agent_id, slow_owner)
    with pytest.raises(ClaimLost), session_scope(engine) as session:
        finish(session, stale, {"status": "done"})
    with session_scope(engine) as session:
        finish(session, claim, {"status": "done"})
    with pytest.raises(ClaimLost), session_scope(engine) as session:
        finish(session, claim, {"status": "done"})  # finished decisions are final


def test_finishing_a_phase_writes_only_claims_still_ours(engine: Engine, tmp_path: Path) -> None:
    """``finish_all`` writes every decision of a phase in one statement and refuses the whole
    phase when one claim is no longer ours (another token, or already final)."""
    cohort_id, source = _cohort(engine, tmp_path)
    rt = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    round_id, token = _claimed_decision(rt)
    with Session(engine) as session:
        rows = session.exec(select(DecisionRow).where(DecisionRow.round_id == round_id)).all()
    claims = [Claim(r.id, r.agent_id, token) for r in rows if r.id is not None]
    done = {"status": "done", "reasoning": 'a "quoted" \\ reason', "latency_s": 0.25}
    stale = Claim(claims[0].decision_id, claims[0].agent_id, new_token())
    with pytest.raises(ClaimLost, match="1 of 3"), session_scope(engine) as session:
        finish_all(session, [(c, done) for c in [stale, *claims[1:]]])
    with session_scope(engine) as session:
        finish_all(session, [(c, done) for c in claims])
    with Session(engine) as session:
        stored = session.exec(select(DecisionRow).where(DecisionRow.round_id == round_id)).all()
    assert {(r.status, r.reasoning, r.latency_s) for r in stored} == {("done", done["reasoning"], 0.25)}
    with pytest.raises(ClaimLost), session_scope(engine) as session:
        finish_all(session, [(c, done) for c in claims])  # finished decisions are final


def test_a_runner_with_stale_ledgers_reloads_them_before_asking(engine: Engine, tmp_path: Path) -> None:
    """Another process executed round 0; this runner, loaded before it, runs round 1 on fresh books."""
    cohort_id, source = _cohort(engine, tmp_path)
    stale = runtime(engine, cohort_id, source)  # type: ignore[arg-type]
    asyncio.run(run_round(runtime(engine, cohort_id, source), 0, day(0)))  # type: ignore[arg-type]
    report = asyncio.run(run_round(stale, 1, day(7)))
    assert report.status == "done" and set(report.statuses.values()) == {"done"}
    with Session(engine) as session:
        second = session.exec(select(DecisionRow).where(DecisionRow.round_id == 2)).all()
    assert all(d.error_kind is None for d in second)
    assert sorted(d.cash_at_start for d in second if d.agent_id != 3) == [9900, 9900]  # after round 0's bets
