"""No resolution left behind, on a live cohort synced from the fake Polymarket on loopback:
``arena markets pending`` lists a held market that the venue closed before its end date while
its answer is disputed, with the venue's status; ``arena markets resolve`` names the winner of a
multi-outcome market; and a later venue answer that contradicts the override is reported by the
sync and by ``arena markets pending`` (the override stands)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.core.settings import Settings
from arena.db.models import FillRow, JobRunRow, MarketRow, PositionRow, ResolutionRow, RoundMarketRow
from arena.engine.books.pending import pending_markets
from arena.engine.runtime.sources import open_source
from arena.scheduling.jobs import job_specs
from arena.scheduling.runs import run_once
from tests.fakes.manifold_server import REAL_MARKETS as MANIFOLD_MARKETS
from tests.fakes.manifold_server import FakeManifold, lite_market, millis, multiple_choice_market
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, gamma_market

START = datetime(2026, 8, 21, tzinfo=UTC)
JOBS = job_specs(Settings())
GAMMA_ID, CONDITION = "570001", "0x" + "ab" * 32
MULTI = f"polymarket:{CONDITION}"
DISPUTED = f"polymarket:{REAL_MARKETS[2][0]}"  # "Will GPT-6 be released before GTA VI?", ends 2026-12-31


@pytest.fixture
def polymarket(fake: FakePolymarket) -> FakePolymarket:
    """The fake Polymarket (``conftest.fake``) with a three-outcome market besides."""
    fake.add(
        gamma_market(
            GAMMA_ID,
            CONDITION,
            "Who will win the 2026 arena chess cup?",
            outcomes=("Alice", "Bob", "Carol"),
            prices=("0.5", "0.3", "0.2"),
            volume=2_000_000.0,
        )
    )
    return fake


def _launch(
    engine: Engine, clock: SimulatedClock, tmp_path: Path, venue: str, bets: list[dict[str, Any]]
) -> str:
    """A live cohort of one round at ``START`` on ``venue``, its one agent placing ``bets`` (scripted)."""
    script = tmp_path / "bets.jsonl"
    lines = [{"time": START.isoformat(), **bet} for bet in bets]
    script.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    config = parse_config(
        {
            "name": "resolutions",
            "mode": "live",
            "venue": venue,
            "start": START.isoformat(),
            "schedule": {"every": "1d", "rounds": 1},
            "universe": {"min_price": "0.01", "max_price": "0.99"},
            "agents": [{"name": "alice", "kind": "scripted", "path": str(script)}],
        }
    )
    return launch(engine, config, source=open_source(config, engine), environ={}, clock=clock).cohort_id


def _arena(engine: Engine, *args: str) -> Any:
    url = engine.url.render_as_string(hide_password=False)
    return CliRunner().invoke(app, [*args, "--database-url", url], env={"COLUMNS": "300"})


def _rounds_done(engine: Engine, clock: SimulatedClock, tmp_path: Path) -> str:
    bets = [
        {"market_id": MULTI, "outcome": "Bob", "amount": 90},
        {"market_id": DISPUTED, "outcome": "YES", "amount": 100},
    ]
    cohort = _launch(engine, clock, tmp_path, "polymarket", bets)
    assert run_once(JOBS["sync"], engine, clock)
    clock.set(START + timedelta(minutes=1))
    assert run_once(JOBS["rounds"], engine, clock)
    with Session(engine) as session:
        held = set(session.exec(select(PositionRow.market_id).where(PositionRow.status == "open")).all())
    assert held == {MULTI, DISPUTED}
    return cohort


def test_a_held_market_closed_early_and_disputed_is_pending_with_its_venue_status(
    engine: Engine, polymarket: FakePolymarket, tmp_path: Path
) -> None:
    clock = SimulatedClock(START - timedelta(minutes=5))
    _rounds_done(engine, clock, tmp_path)
    # Months before its end date, the market stops trading and its proposed answer is disputed.
    polymarket.update("560002", closed=True, umaResolutionStatus="disputed")
    clock.advance(timedelta(minutes=15))
    assert run_once(JOBS["sync"], engine, clock)
    with Session(engine) as session:
        market = session.get(MarketRow, DISPUTED)
    assert market is not None and market.close_time is not None and market.close_time > clock.now()
    assert market.venue_status == "closed; UMA status 'disputed' is not final"

    first, second = pending_markets(engine, clock.now())  # what the command shows, stopped first
    assert (first.market_id, first.trading, first.positions, first.reason) == (
        DISPUTED,
        False,
        1,
        "closed, no resolution yet",
    )
    assert first.venue_status == "closed; UMA status 'disputed' is not final"
    assert (second.market_id, second.trading, second.venue_status) == (MULTI, True, "trading")
    listed = _arena(engine, "markets", "pending")
    assert listed.exit_code == 0, listed.output
    assert DISPUTED[:24] in listed.output and "disputed" in listed.output
    assert "1 stopped trading, 1 still trading." in listed.output
    stopped = _arena(engine, "markets", "pending", "--stopped")
    assert DISPUTED[:24] in stopped.output and MULTI[:24] not in stopped.output


def test_the_operator_names_a_multi_outcome_winner_and_a_contradicting_venue_answer_is_reported(
    engine: Engine, polymarket: FakePolymarket, tmp_path: Path
) -> None:
    clock = SimulatedClock(START - timedelta(minutes=5))
    cohort = _rounds_done(engine, clock, tmp_path)
    polymarket.update(GAMMA_ID, closed=True, umaResolutionStatus="proposed")
    clock.advance(timedelta(minutes=15))
    assert run_once(JOBS["sync"], engine, clock)

    refused = _arena(engine, "markets", "resolve", MULTI, "--outcome", "Dave")
    assert refused.exit_code == 2
    assert "'Dave' is not an outcome of" in refused.output and "Alice, Bob, Carol, VOID" in refused.output
    fifty = _arena(engine, "markets", "resolve", MULTI, "--outcome", "5050")
    assert fifty.exit_code == 2 and "5050 is for YES/NO markets" in fifty.output
    resolved = _arena(
        engine, "markets", "resolve", MULTI, "--outcome", "bob", "--note", "the cup's own result"
    )
    assert resolved.exit_code == 0, resolved.output
    assert (
        "resolved 'Bob' by operator override" in resolved.output and "1 positions settled" in resolved.output
    )
    with Session(engine) as session:
        payout = session.exec(
            select(FillRow).where(FillRow.kind == "settle", FillRow.market_id == MULTI)
        ).one()
    assert payout.price == Decimal(1) and payout.amount == payout.shares  # $1 a share of Bob

    # The venue's own answer comes later, and differs: Alice won.
    polymarket.update(GAMMA_ID, umaResolutionStatus="resolved", outcomePrices=json.dumps(["1", "0", "0"]))
    clock.advance(timedelta(minutes=15))
    assert run_once(JOBS["sync"], engine, clock)
    with Session(engine) as session:
        row = session.exec(select(ResolutionRow).where(ResolutionRow.market_id == MULTI)).one()
        message = session.exec(
            select(JobRunRow.message)
            .where(JobRunRow.job == "sync")
            .order_by(col(JobRunRow.started_at).desc())
        ).first()
    assert (row.source, row.payouts_json) == (
        "operator",
        {"Alice": "0", "Bob": "1", "Carol": "0"},
    )  # it stands
    assert row.venue_answer_json is not None and row.venue_answer_json["payouts"]["Alice"] == "1"
    assert message is not None and "1 overrides contradicted" in message
    assert "the venue resolved it 'Alice', contradicting the operator's override 'Bob'" in message
    (doubted,) = (p for p in pending_markets(engine, clock.now()) if p.market_id == MULTI)
    assert doubted.reason == "override 'Bob' contradicted by the venue's answer 'Alice' (the override stands)"
    assert doubted.venue_status == "resolved 'Alice'"
    listed = _arena(engine, "markets", "pending")
    assert MULTI[:24] in listed.output and "contradicted" in listed.output
    reconciled = _arena(engine, "cohort", "reconcile", cohort)
    assert reconciled.exit_code == 0, reconciled.output


def test_a_manifold_multiple_choice_market_is_offered_bet_on_and_settled(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeManifold() as venue:
        for i in range(len(MANIFOLD_MARKETS)):
            venue.add(lite_market(i))
        chosen = multiple_choice_market(1, {"Red": 0.5, "Green": 0.3, "Blue": 0.2}, volume=500_000)
        venue.add(chosen)
        monkeypatch.setenv("ARENA_MANIFOLD_URL", venue.url)
        market_id = f"manifold:{chosen['id']}"
        clock = SimulatedClock(START - timedelta(minutes=5))
        bet = {"market_id": market_id, "outcome": "Green", "amount": 90}
        cohort = _launch(engine, clock, tmp_path, "manifold", [bet])
        assert run_once(JOBS["sync"], engine, clock)
        clock.set(START + timedelta(minutes=1))
        assert run_once(JOBS["rounds"], engine, clock)
        with Session(engine) as session:
            offered = session.exec(select(RoundMarketRow).where(RoundMarketRow.market_id == market_id)).one()
            (buy,) = session.exec(select(FillRow).where(FillRow.market_id == market_id)).all()
        assert offered.prices_json == {"Red": "0.5", "Green": "0.3", "Blue": "0.2"}
        assert (buy.kind, buy.outcome, buy.price) == ("buy", "Green", Decimal("0.3"))

        venue.update(
            chosen["id"],
            isResolved=True,
            resolution=f"{chosen['id']}-a1",
            resolutionTime=millis("2026-08-21T02:00:00+00:00"),
        )
        clock.advance(timedelta(hours=2))
        assert run_once(JOBS["sync"], engine, clock)
        assert run_once(JOBS["settle"], engine, clock)
    with Session(engine) as session:
        payout = session.exec(select(FillRow).where(FillRow.kind == "settle")).one()
    assert (payout.outcome, payout.price, payout.amount) == ("Green", Decimal(1), buy.shares)
    reconciled = _arena(engine, "cohort", "reconcile", cohort)
    assert reconciled.exit_code == 0, reconciled.output
