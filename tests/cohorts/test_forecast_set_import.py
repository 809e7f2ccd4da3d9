"""`arena data import-forecast-set` on ForecastBench's shipped human set, through the arena's own
scoring path (import, then `arena leaderboard --json`), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts import forecast_sets
from arena.db.engine import make_engine, session_scope
from arena.db.migrate import upgrade
from arena.db.models import (
    AgentRow,
    CohortRow,
    ExternalForecastRow,
    MarketRow,
    ResolutionRow,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "forecastbench-human"
QUESTIONS = DATA / "2024-07-21-human.json"
SUPERS = DATA / "2024-07-21.ForecastBench.human_super_individual.json"
RESOLUTIONS = DATA / "2024-07-21_resolution_set.2024-11-26.json"
runner = CliRunner()
_T = datetime(2024, 8, 1, tzinfo=UTC)


def _import(
    url: str,
    *extra: str,
    questions: Path = QUESTIONS,
    forecasts: Path = SUPERS,
    resolutions: Path = RESOLUTIONS,
):
    args = ["data", "import-forecast-set", "--questions", str(questions), "--forecasts", str(forecasts)]
    return runner.invoke(app, [*args, "--resolutions", str(resolutions), "--database-url", url, *extra])


def _board(url: str, cohort_id: str) -> dict[str, dict[str, Any]]:
    args = [
        "leaderboard",
        "--cohort",
        cohort_id,
        "--json",
        "--replicates",
        "50",
        "--by",
        "stated_brier_overall",
    ]
    result = runner.invoke(app, [*args, "--database-url", url])
    assert result.exit_code == 0, result.output
    return {row["agent"]: row for row in json.loads(result.stdout)["agents"]}


def test_the_superforecaster_median_scores_as_forecastbench_published(db_url: str) -> None:
    result = _import(db_url)
    assert result.exit_code == 0, result.output
    cohort_id = result.stdout.strip()
    assert "77 market questions (21 resolved)" in result.stderr
    assert "market questions absent from the resolution set: 13" in result.stderr
    board = _board(db_url, cohort_id)
    median, half = board["superforecaster-median"], board["always-0.5"]
    # ForecastBench, 2024-11-26: Superforecaster median forecast on market questions 0.059 over
    # 77 markets, 0.080 on the 21 resolved and 0.051 on the 56 unresolved; Always 0.5: 0.184.
    assert (median["stated_events"], median["provisional_events"]) == (21, 56)
    assert round(median["stated_brier"], 3) == 0.080
    assert round(median["stated_brier_provisional"], 3) == 0.051
    assert round(median["stated_brier_overall"], 3) == 0.059
    assert (half["stated_events"], half["provisional_events"]) == (21, 56)
    assert round(half["stated_brier_overall"], 3) == 0.184
    # The aggregates and the 40 forecasters are external: marked, no bets, no money; half is the
    # baseline bettor it always is.
    externals = [row for name, row in board.items() if name.startswith("superforecaster-")]
    assert len(externals) == 43
    assert all(r["external"] and r["agent_kind"] == "external" and r["bets"] == 0 for r in externals)
    assert all(r["return_pct"] is None and r["bankroll"] is None for r in externals)
    assert (half["external"], half["agent_kind"], half["baseline"]) == (False, "half", True)
    assert round(board["superforecaster-mean"]["stated_brier_overall"], 4) == 0.0582  # not ForecastBench's
    # Nobody bet: the printed table shows the stated scores, external forecasters marked *.
    args = ["leaderboard", "--cohort", cohort_id, "--replicates", "20", "--database-url", db_url]
    printed = runner.invoke(app, args, env={"COLUMNS": "100"}).stdout
    row = next(line.split() for line in printed.splitlines() if "superforecaster-median" in line)
    assert row[1:5] == ["superforecaster-median", "‡*", "0.059", "0.080"] and row[-2:] == [
        "21",
        "provisional",
    ]
    assert "* external forecaster (no bets)" in " ".join(printed.split())


def test_a_bad_file_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(url)
    document = json.loads(RESOLUTIONS.read_text())
    rows = document["resolutions"]
    first = next(i for i, r in enumerate(rows) if r["source"] == "manifold")
    rows[first + 1] = {**rows[first + 1], "resolved_to": 0.5}  # the 30-day row says otherwise
    broken = tmp_path / "broken_resolution_set.2024-11-26.json"
    broken.write_text(json.dumps(document))
    result = _import(url, resolutions=broken)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "(a market question counts once)" in result.stderr and f"resolutions[{first + 1}]" in result.stderr
    assert _count(url, CohortRow) == 0


def test_a_resolution_the_arena_knows_otherwise_stops_the_import_whole(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(url)
    asked = {q["id"] for q in json.loads(QUESTIONS.read_text())["questions"] if q["source"] == "polymarket"}
    resolved = next(
        r
        for r in json.loads(RESOLUTIONS.read_text())["resolutions"]
        if r["source"] == "polymarket" and r["resolved"] and r["id"] in asked
    )
    market_id = f"polymarket:{resolved['id']}"
    other = "NO" if resolved["resolved_to"] == 1 else "YES"
    engine = make_engine(url)
    with session_scope(engine) as session:
        _, venue_id = market_id.split(":")
        session.add(
            MarketRow(
                id=market_id,
                venue="polymarket",
                venue_id=venue_id,
                question="?",
                outcomes_json=["YES", "NO"],
                first_seen_at=_T,
                updated_at=_T,
            )
        )
        session.add(
            ResolutionRow(
                market_id=market_id, kind=other, payouts_json={other: "1"}, resolved_at=_T, detected_at=_T
            )
        )
    engine.dispose()
    result = _import(url)
    assert result.exit_code == 2
    said = "YES" if other == "NO" else "NO"
    assert result.stderr == (
        f"error: market {market_id}: the arena has it resolved {other}, the resolution set says {said}\n"
    )
    for table, rows in ((CohortRow, 0), (AgentRow, 0), (ExternalForecastRow, 0), (MarketRow, 1)):
        assert _count(url, table) == rows, table


def test_inputs_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forecast_sets, "MAX_FILE_BYTES", 3_000_000)
    result = _import(f"sqlite:///{tmp_path / 'arena.db'}")
    assert result.exit_code == 2
    assert result.stderr == (f"error: {SUPERS}: 4,021,076 bytes, over the limit of 3,000,000\n")
    monkeypatch.undo()
    named = _import(f"sqlite:///{tmp_path / 'arena.db'}", "--name", "x" * 121)
    assert named.exit_code == 2
    assert named.stderr == "error: imported forecast set: name: String should have at most 120 characters\n"


def test_a_resolution_set_without_a_date_needs_one(tmp_path: Path) -> None:
    undated = tmp_path / "resolution_set.json"
    undated.write_bytes(RESOLUTIONS.read_bytes())
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    result = _import(url, resolutions=undated)
    assert result.exit_code == 2 and "give --resolution-date" in result.stderr
    dated = _import(url, "--resolution-date", "2024-11-26", resolutions=undated)
    assert dated.exit_code == 0, dated.output


def _count(url: str, table: type) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(select(func.count()).select_from(table)).scalar_one())
    finally:
        engine.dispose()
