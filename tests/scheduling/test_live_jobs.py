"""The scheduled jobs on a live cohort, end to end: sync from the fake Polymarket on loopback,
rounds due at their times (including catch-up after downtime), marks — through ``run_once``
exactly as ``arena serve`` runs them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, func
from sqlmodel import Session, select

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.core.settings import Settings
from arena.db.models import DecisionRow, FillRow, MarketRow, PortfolioSnapshotRow, RoundRow
from arena.engine.runtime.sources import open_source
from arena.reports.overview import cohort_overview
from arena.scheduling.jobs import job_specs
from arena.scheduling.runs import run_once
from arena.scoring.load.database import load_frames
from arena.scoring.rules.costs import cost_metrics
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket

START = datetime(2026, 8, 21, tzinfo=UTC)
JOBS = job_specs(Settings())  # the default cadences


def _count(engine: Engine, table: type, *where: object) -> int:
    with Session(engine) as session:
        return int(session.exec(select(func.count()).select_from(table).where(*where)).one())  # type: ignore[arg-type]


def _launch(
    engine: Engine,
    clock: SimulatedClock,
    catch_up_grace: str = "1h",
    marks_every: str = "1d",
    name: str = "live-test",
    price_age: str = "6h",
) -> str:
    config = parse_config(
        {
            "name": name,
            "marks": {"every": marks_every},
            "prices": {"snapshot_max_age_live": price_age},
            "mode": "live",
            "venue": "polymarket",
            "start": START.isoformat(),
            "schedule": {"every": "1d", "rounds": 3, "catch_up_grace": catch_up_grace},
            "tournament": {"hidden_fraction": 0},  # round 0 shows prices: favorite bets on them
            "agents": [{"name": "fav", "kind": "favorite"}, {"name": "mkt", "kind": "market"}],
        }
    )
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def test_no_live_cohort_means_nothing_to_sync(engine: Engine, fake: FakePolymarket) -> None:
    assert run_once(JOBS["sync"], engine, SimulatedClock(START))
    assert _count(engine, MarketRow) == 0


def _rounds(engine: Engine, cohort: str) -> dict[int, RoundRow]:
    with Session(engine) as session:
        rows = session.exec(select(RoundRow).where(RoundRow.cohort_id == cohort)).all()
    return {r.round_index: r for r in rows}


def _decisions(engine: Engine, round_id: int | None) -> list[DecisionRow]:
    with Session(engine) as session:
        return list(session.exec(select(DecisionRow).where(DecisionRow.round_id == round_id)).all())


def test_sync_then_rounds_then_a_round_overdue_past_the_grace_is_missed(
    engine: Engine, fake: FakePolymarket
) -> None:
    clock = SimulatedClock(START)
    cohort = _launch(engine, clock)
    assert run_once(JOBS["sync"], engine, clock)
    synced = _count(engine, MarketRow)
    assert 0 < synced <= len(REAL_MARKETS)  # the default filters drop decided and far-off markets

    clock.advance(timedelta(minutes=1))  # snapshots are stamped when read: round 0 sees them
    assert run_once(JOBS["rounds"], engine, clock)
    assert _count(engine, RoundRow, RoundRow.cohort_id == cohort) == 1
    assert _count(engine, DecisionRow, DecisionRow.cohort_id == cohort) == 2
    bets = _count(engine, FillRow, FillRow.kind == "buy")
    assert bets > 0  # favorite bet on the synced prices
    first = _rounds(engine, cohort)[0]
    # Stored times are the real ones (the injected clock), not the scheduled time.
    assert (first.scheduled_at, first.started_at, first.finished_at) == (START, clock.now(), clock.now())
    assert {d.decided_at for d in _decisions(engine, first.id)} == {clock.now()}

    # The server is down for two days. Round 1 (due a day ago) is missed for every agent, never
    # asked now on its old snapshot; round 2 (due a minute ago, within the grace) runs, on the
    # prices of a sync just before it.
    clock.set(START + timedelta(days=2) - timedelta(minutes=5))
    assert run_once(JOBS["sync"], engine, clock)
    clock.set(START + timedelta(days=2, minutes=1))
    assert run_once(JOBS["rounds"], engine, clock)
    rounds = _rounds(engine, cohort)
    assert {k: r.status for k, r in rounds.items()} == {0: "done", 1: "missed", 2: "done"}
    assert rounds[1].market_count is None and rounds[1].finished_at == clock.now()
    missed = _decisions(engine, rounds[1].id)
    assert len(missed) == 2 and {d.status for d in missed} == {"missed"}
    assert all(d.decided_at is None and d.error_kind == "missed" for d in missed)
    reason = "round found 24.0 h after its time, more than schedule.catch_up_grace (1.0 h)"
    assert all((d.error or "").startswith(reason) for d in missed)
    assert run_once(JOBS["rounds"], engine, clock) is False  # same minute: claimed already

    overview = cohort_overview(engine, cohort)
    assert overview is not None and overview.rounds_done == 3
    assert {(a.name, a.errors, a.missed) for a in overview.agents} == {("fav", 0, 1), ("mkt", 0, 1)}
    costs = cost_metrics(load_frames(engine, [cohort]))
    assert costs["decisions"].to_list() == [2, 2] and costs["valid_rate"].to_list() == [1.0, 1.0]

    assert run_once(JOBS["marks"], engine, clock)
    assert _count(engine, PortfolioSnapshotRow, PortfolioSnapshotRow.cohort_id == cohort) >= 2


def test_a_grace_of_seconds_is_named_in_seconds(engine: Engine, fake: FakePolymarket) -> None:
    clock = SimulatedClock(START)
    cohort = _launch(engine, clock, catch_up_grace="20s")
    assert run_once(JOBS["sync"], engine, clock)
    clock.advance(timedelta(seconds=45))
    assert run_once(JOBS["rounds"], engine, clock)
    (missed,) = _rounds(engine, cohort).values()
    reasons = {d.error for d in _decisions(engine, missed.id)}
    assert missed.status == "missed" and len(reasons) == 1
    assert reasons.pop().startswith(
        "round found 45 s after its time, more than schedule.catch_up_grace (20 s)"
    )


def test_a_wider_grace_catches_an_overdue_round_up(engine: Engine, fake: FakePolymarket) -> None:
    clock = SimulatedClock(START)
    cohort = _launch(engine, clock, catch_up_grace="3d", price_age="3d")  # old prices still count
    assert run_once(JOBS["sync"], engine, clock)
    clock.advance(timedelta(days=2, minutes=1))
    assert run_once(JOBS["sync"], engine, clock)
    assert run_once(JOBS["rounds"], engine, clock)
    rounds = _rounds(engine, cohort)
    assert {k: r.status for k, r in rounds.items()} == {0: "done", 1: "done", 2: "done"}
    assert {r.started_at for r in rounds.values()} == {clock.now()}


def test_the_marks_job_follows_each_cohorts_marks_every(engine: Engine, fake: FakePolymarket) -> None:
    """A cohort marking every 15 minutes gets a mark each 15 minutes, one marking daily once a day,
    from the same job at its default cadence (it polls; each cohort has its own grid)."""
    clock = SimulatedClock(START)
    often = _launch(engine, clock, marks_every="15m", name="often")
    daily = _launch(engine, clock, name="daily")

    def marks(cohort: str) -> int:
        return _count(engine, PortfolioSnapshotRow, PortfolioSnapshotRow.cohort_id == cohort)

    assert run_once(JOBS["marks"], engine, clock)
    assert (marks(often), marks(daily)) == (2, 2)  # two agents each
    for minutes in (5, 10, 15, 20, 30):
        clock.set(START + timedelta(minutes=minutes))
        assert run_once(JOBS["marks"], engine, clock)
    assert (marks(often), marks(daily)) == (2 * 3, 2)  # buckets 0, 15 and 30 minutes; day 0 only
    clock.set(START + timedelta(days=1, minutes=1))
    assert run_once(JOBS["marks"], engine, clock)
    assert (marks(often), marks(daily)) == (2 * 4, 2 * 2)
