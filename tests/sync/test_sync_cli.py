"""`arena markets sync` and `arena markets record` through the real typer app, against the fake venues
(on loopback, via --gamma-url/--clob-url/--manifold-url) and a SQLite file given by ARENA_DATABASE_URL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow
from markets.replay import load_dataset
from tests.fakes.manifold_server import FakeManifold, lite_market
from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market
from tests.fakes.venue_server import Fault

FAR = "2030-01-01T00:00:00Z"  # the CLI runs on the system clock: keep the fake markets open


@pytest.fixture
def database(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'arena.db'}"


def invoke(database: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"ARENA_DATABASE_URL": database, "COLUMNS": "200"})
    return result.exit_code, result.output


def polymarket_args(fake: FakePolymarket) -> list[str]:
    return ["markets", "sync", "--gamma-url", fake.url, "--clob-url", fake.url, "--max-days-to-close", "0"]


def test_sync_then_record_a_replay_dataset(database: str, tmp_path: Path) -> None:
    with FakePolymarket() as fake:
        for i in range(6):
            fake.add(real_market(i, end=FAR))
        fake.update("560005", outcomePrices='["NaN", "0.8"]')
        code, output = invoke(database, *polymarket_args(fake), "--history-days", "0")
        assert code == 0, output
        assert re.search(r"kept \(top N after filters\)\s+│\s+5\s+│", output), output
        assert re.search(r"listing .* 5/5 ", output), output  # the 5 kept, not --top-n 500
        assert re.search(r"price snapshots written\s+│\s+10\s+│", output), output
        assert f"problem polymarket:{REAL_MARKETS[5][0]}: skipped" in output and "must be finite" in output
        fake.update(
            "560002",
            closed=True,
            umaResolutionStatus="resolved",
            outcomePrices='["1", "0"]',
            umaEndDate="2026-08-25T00:00:00Z",
        )
        code, output = invoke(database, *polymarket_args(fake), "--history-days", "0")
        assert code == 0, output
    engine = make_engine(database)
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(MarketRow)).one() == 5
        assert session.exec(select(func.count()).select_from(ResolutionRow)).one() == 1
        assert session.exec(select(func.count()).select_from(MarketSnapshotRow)).one() > 10
    out = tmp_path / "recorded"
    code, output = invoke(database, "markets", "record", "--out", str(out), "--name", "t")  # both venues
    assert code == 0, output
    assert "Recorded 5 markets" in output
    dataset = load_dataset(out)
    assert set(dataset.markets) == {f"polymarket:{REAL_MARKETS[i][0]}" for i in range(5)}
    (resolution,) = dataset.resolutions.values()
    assert resolution.market_id == f"polymarket:{REAL_MARKETS[2][0]}" and resolution.kind.value == "YES"
    assert dataset.info.source.startswith("Recorded by `arena markets sync` from polymarket public APIs")
    again, output = invoke(database, "markets", "record", "--out", str(out), "--venue", "polymarket")
    assert again == 2 and "already exists" in output


def test_sync_exits_non_zero_when_the_venue_is_unreachable(database: str) -> None:
    with FakeManifold() as fake:
        fake.add(lite_market(3))
        fake.fail("/v0/markets", Fault(status=503, retry_after="0"), times=50)
        code, output = invoke(database, "markets", "sync", "--venue", "manifold", "--manifold-url", fake.url)
    assert code == 1 and "listing: stopped early after 0 markets" in output and "HTTP 503" in output


def test_record_refuses_an_empty_database(database: str, tmp_path: Path) -> None:
    code, output = invoke(database, "markets", "record", "--out", str(tmp_path / "x"))
    assert code == 1 and "nothing to record" in output and not (tmp_path / "x").exists()
