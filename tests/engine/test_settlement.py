"""Settlement, deferral, the stale-market report, completion and the operator's override."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine, event
from sqlmodel import Session, col, select

from arena.db.engine import session_scope
from arena.db.market_rows import resolution_row, write_resolutions
from arena.db.models import CohortRow, FillRow, JobRunRow, ResolutionRow
from arena.engine.books.completion import complete_if_done
from arena.engine.books.pending import pending_markets
from arena.engine.books.resolving import OverrideError, override
from arena.engine.books.settlement import settle
from arena.engine.rounds.run import run_round
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.store.ledger_store import reconcile
from markets.types import Resolution, ResolutionKind
from portfolio import SettlementRejected
from tests.engine.helpers import (
    A,
    B,
    config,
    day,
    frozen_parses,
    launch_cohort,
    replay,
    runtime,
    script,
    tiny_dataset,
    write_market_dataset,
)

D = Decimal
U = "polymarket:u"
LATER = datetime(2030, 1, 1, tzinfo=UTC)  # a wall-clock "now" long after the data


def _bettor(tmp_path: Path, *bets: tuple[str, str, int]) -> dict[str, object]:
    lines = [{"time": day(0).isoformat(), "market_id": m, "outcome": o, "amount": a} for m, o, a in bets]
    return {"name": "alice", "kind": "scripted", "path": str(script(tmp_path / "alice.jsonl", lines))}


def _cohort_status(engine: Engine, cohort_id: str) -> str:
    with Session(engine) as session:
        row = session.get(CohortRow, cohort_id)
        assert row is not None
        return row.status


def test_fifty_fifty_pays_half_a_dollar_a_share(engine: Engine, tmp_path: Path) -> None:
    dataset = write_market_dataset(tmp_path / "data", {A: {0: "0.40"}}, {A: (3, ResolutionKind.FIFTY_FIFTY)})
    result, rt = replay(
        engine, config(dataset, [_bettor(tmp_path, (A, "YES", 100))], schedule={"every": "1d", "rounds": 1})
    )
    assert result.completed
    # 250 shares at 0.40 pay 0.50 each: 125, realised +25
    assert (rt.agents[0].book.ledger.cash, rt.agents[0].book.ledger.realized_pnl) == (D("10025"), D("25"))


def test_an_inapplicable_resolution_is_deferred_and_changes_nothing(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = launch_cohort(
        engine, config(tiny_dataset(tmp_path / "data"), [_bettor(tmp_path, (A, "NO", 100))])
    )
    rt = runtime(engine, cohort_id, source)
    asyncio.run(run_round(rt, 0, day(0)))
    odd = Resolution(A, ResolutionKind.OUTCOME, {"YES": D(1)}, day(3), "venue")  # says nothing about NO
    report = settle(rt, [odd], day(3))
    assert A in report.deferred and "payout for outcome 'NO'" in report.deferred[A]
    assert rt.agents[0].book.ledger.cash == D("9900") and len(rt.agents[0].book.ledger.open_positions()) == 1
    with session_scope(engine) as session:  # the venue's row, as the live sync would have stored it
        write_resolutions(session, [resolution_row(odd, day(3), None)])
    (pending,) = pending_markets(engine, LATER)
    assert (pending.market_id, pending.positions) == (A, 1) and "deferred" in pending.reason


def test_a_programming_error_in_settlement_propagates_instead_of_deferring(
    engine: Engine, tmp_path: Path
) -> None:
    cohort_id, source = launch_cohort(
        engine, config(tiny_dataset(tmp_path / "data"), [_bettor(tmp_path, (A, "YES", 100))])
    )
    rt = runtime(engine, cohort_id, source)
    asyncio.run(run_round(rt, 0, day(0)))
    win = Resolution.binary(A, ResolutionKind.YES, day(19), "test")
    # A naive time is a caller's bug (the clock is always UTC), also a ValueError, but not bad data.
    with pytest.raises(ValueError, match="has no time zone") as error:
        settle(rt, [win], day(19).replace(tzinfo=None))
    assert not isinstance(error.value, SettlementRejected)
    assert rt.agents[0].book.ledger.cash == D("9900") and len(rt.agents[0].book.ledger.open_positions()) == 1


def test_settling_twice_pays_once(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = launch_cohort(
        engine, config(tiny_dataset(tmp_path / "data"), [_bettor(tmp_path, (A, "YES", 100))])
    )
    rt = runtime(engine, cohort_id, source)
    asyncio.run(run_round(rt, 0, day(0)))
    win = Resolution.binary(A, ResolutionKind.YES, day(19), "test")
    assert sum(settle(rt, [win], day(19)).settled.values()) == 1
    assert settle(runtime(engine, cohort_id, source), [win], day(19)).settled == {}  # a second process: no-op
    with Session(engine) as session:
        assert len(session.exec(select(FillRow).where(FillRow.kind == "settle")).all()) == 1


def test_an_all_hold_cohort_completes_after_its_last_round_not_before(engine: Engine, tmp_path: Path) -> None:
    cohort_id, source = launch_cohort(
        engine, config(tiny_dataset(tmp_path / "data"), [{"name": "h", "kind": "hold"}])
    )
    rt = runtime(engine, cohort_id, source)
    asyncio.run(run_round(rt, 0, day(0)))
    assert not complete_if_done(rt, day(1)) and _cohort_status(engine, cohort_id) == "pending"
    asyncio.run(run_round(rt, 1, day(7)))
    assert complete_if_done(rt, day(8)) and _cohort_status(engine, cohort_id) == "completed"


def test_unresolved_positions_are_reported_then_resolved_by_the_operator(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    series = {A: {0: "0.40", 7: "0.50"}, U: {d: "0.30" for d in range(5)}}
    dataset = write_market_dataset(
        tmp_path / "data", series, {A: (19, ResolutionKind.YES)}, close_days={U: 5}
    )
    data = config(dataset, [_bettor(tmp_path, (U, "YES", 300))], marks={"every": "1d", "stale_after_days": 7})
    result, rt = replay(engine, data)
    assert not result.completed and result.end == day(19)
    (stale,) = result.stale
    assert (stale.market_id, stale.reason, stale.waiting_since) == (U, "market closed, no resolution", day(5))
    assert _cohort_status(engine, rt.cohort_id) == "running"
    (pending,) = pending_markets(engine, LATER)
    assert (pending.market_id, pending.reason) == (U, "closed, no resolution yet")

    parses = frozen_parses(monkeypatch)
    resolution, settled = override(
        engine, U, "void", note="market cancelled by the venue", now=LATER, environ={}
    )
    assert resolution.kind is ResolutionKind.VOID and settled == {rt.cohort_id: 1}
    assert len(parses) == 1  # the one holding cohort's frozen config, parsed once
    assert _cohort_status(engine, rt.cohort_id) == "completed" and pending_markets(engine, LATER) == []
    with Session(engine) as session:
        row = session.exec(select(ResolutionRow).where(ResolutionRow.market_id == U)).one()
        refund = session.exec(select(FillRow).where(FillRow.kind == "settle")).one()
        job = session.exec(select(JobRunRow).where(JobRunRow.job == "resolve-override")).one()
        assert reconcile(session, rt.rules, [rt.agents[0].id]) == []
    assert (row.source, row.kind) == ("operator", "VOID") and "market cancelled by the venue" in (
        row.override_note or ""
    )
    assert (refund.amount, refund.filled_at) == (D("300"), day(19))  # at the replay's last instant
    assert job.ok and job.scope == U
    with pytest.raises(OverrideError, match="already resolved VOID and settled"):
        override(engine, U, "YES", note="second thoughts", now=LATER, environ={})


def test_override_of_an_unknown_market_is_refused(engine: Engine) -> None:
    with pytest.raises(OverrideError, match="unknown market 'polymarket:nope'"):
        override(engine, "polymarket:nope", "YES", note="", now=LATER, environ={})


def _holding_a_and_b(engine: Engine, tmp_path: Path) -> CohortRuntime:
    bettor = _bettor(tmp_path, (A, "YES", 100), (B, "NO", 100))
    cohort_id, source = launch_cohort(engine, config(tiny_dataset(tmp_path / "data"), [bettor]))
    rt = runtime(engine, cohort_id, source)
    asyncio.run(run_round(rt, 0, day(0)))
    assert len(rt.agents[0].book.ledger.open_positions()) == 2
    return rt


def test_markets_resolving_together_settle_in_one_transaction(engine: Engine, tmp_path: Path) -> None:
    rt = _holding_a_and_b(engine, tmp_path)
    commits: list[object] = []

    def count(connection: object) -> None:
        commits.append(connection)

    event.listen(engine, "commit", count)
    both = [
        Resolution.binary(A, ResolutionKind.YES, day(9), "t"),
        Resolution.binary(B, ResolutionKind.NO, day(9), "t"),
    ]
    try:
        report = settle(rt, both, day(9))
    finally:
        event.remove(engine, "commit", count)
    assert report.settled == {A: 1, B: 1} and len(commits) == 1
    with Session(engine) as session:
        settled = session.exec(
            select(FillRow.market_id).where(FillRow.kind == "settle").order_by(col(FillRow.id))
        )
        assert list(settled) == [A, B]  # the order one transaction per market would store
        assert reconcile(session, rt.rules, [rt.agents[0].id]) == []
    assert rt.agents[0].book.ledger.open_positions() == []


def test_a_rejected_resolution_defers_its_market_and_the_others_still_settle(
    engine: Engine, tmp_path: Path
) -> None:
    rt = _holding_a_and_b(engine, tmp_path)
    cash = rt.agents[0].book.ledger.cash
    odd = Resolution(A, ResolutionKind.OUTCOME, {"NO": D(1)}, day(9), "venue")  # says nothing about YES
    report = settle(rt, [odd, Resolution.binary(B, ResolutionKind.NO, day(9), "t")], day(9))
    assert A in report.deferred and report.settled == {B: 1}
    ledger = rt.agents[0].book.ledger
    assert [p.market_id for p in ledger.open_positions()] == [A]
    assert ledger.cash > cash  # B's NO shares paid out
    with Session(engine) as session:
        assert reconcile(session, rt.rules, [rt.agents[0].id]) == []


def test_a_market_only_stated_on_is_pending_without_a_resolution(engine: Engine, tmp_path: Path) -> None:
    """No agent holds U, but one stated a forecast on it: it waits for a resolution all the same
    (stated forecasts are scored on it), so it is listed; never synced, it has no venue status."""
    series = {A: {0: "0.40", 7: "0.50"}, U: {d: "0.30" for d in range(5)}}
    dataset = write_market_dataset(
        tmp_path / "data", series, {A: (19, ResolutionKind.YES)}, close_days={U: 5}
    )
    line = {"time": day(0).isoformat(), "market_id": U, "outcome": "YES", "probability": 0.3}
    forecaster = {"name": "bob", "kind": "scripted", "path": str(script(tmp_path / "bob.jsonl", [line]))}
    replay(engine, config(dataset, [forecaster], marks={"every": "1d"}))
    (pending,) = pending_markets(engine, LATER)
    assert (pending.market_id, pending.positions, pending.cohorts) == (U, 0, 1)
    assert (pending.venue_status, pending.trading, pending.reason) == (
        None,
        False,
        "closed, no resolution yet",
    )
