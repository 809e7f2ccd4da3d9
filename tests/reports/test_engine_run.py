"""End to end on a real replay: the engine runs a cohort on the bundled dataset, then its report
is built twice (identical tables) and the dashboard's leaderboard renders it."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock, SystemClock
from arena.engine.replay.runner import replay_cohort
from arena.engine.runtime.sources import open_source
from arena.reports.bundle import build_report
from tests.dashboard.conftest import APP

COHORT = "engine-run"
CONFIG = {
    "name": "engine run",
    "start": "2025-09-15T00:00:00Z",
    "seed": 7,
    "schedule": {"every": "7d", "rounds": 3},
    "universe": {
        "max_markets": 20,
        "order_by": "close_time",
        "max_days_to_close": 365,
        "min_price": "0.03",
        "max_price": "0.97",
    },
    "agents": [
        {"name": "hold", "kind": "hold"},
        {"name": "random", "kind": "random"},
        {"name": "fav", "kind": "favorite"},
    ],
}


@pytest.fixture
def replayed(engine: Engine) -> Engine:
    config = parse_config(CONFIG)
    source = open_source(config, engine)
    clock = SimulatedClock(datetime(2025, 9, 1, tzinfo=UTC))
    launch(engine, config, source=source, environ={}, clock=clock, cohort_id=COHORT)
    result = asyncio.run(replay_cohort(engine, COHORT, source, environ={}, wall_clock=SystemClock()))
    assert result.rounds and not result.failed_rounds
    return engine


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_replayed_cohort_reports_reproducibly_and_renders(
    replayed: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = SimulatedClock(datetime(2026, 1, 1, tzinfo=UTC))
    first = build_report(replayed, COHORT, tmp_path / "a", clock=clock, environ=os.environ)
    second = build_report(replayed, COHORT, tmp_path / "b", clock=clock, environ=os.environ)

    for table in sorted((first.folder / "tables").iterdir()):
        assert table.read_bytes() == (second.folder / "tables" / table.name).read_bytes(), table.name
    fills = pl.read_parquet(first.folder / "tables/fills.parquet")
    assert {"buy", "settle"} <= set(fills["kind"]) and set(fills["agent"]) <= {"random", "fav"}
    scores = pl.read_parquet(first.folder / "tables/scores.parquet")
    assert sorted(scores["agent"]) == ["fav", "hold", "random"]

    monkeypatch.setenv("ARENA_DATABASE_URL", replayed.url.render_as_string(hide_password=False))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.session_state["cohort"] = COHORT
    app.run()
    assert [e.value for e in app.exception] == []
    assert sorted(app.dataframe[0].value["Agent"]) == ["fav", "hold", "random"]
