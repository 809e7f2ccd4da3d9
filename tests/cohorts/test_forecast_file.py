"""`arena data import-forecasts`: external forecasts beside a cohort's agents, point in time, whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts import forecast_file
from arena.db.models import AgentRow, ExternalForecastRow
from tests.scoring.stored import BIN, MULTI, VOID, populate

runner = CliRunner()
HEADER = "forecaster,market_id,time,probability,outcome\n"


@pytest.fixture
def url(engine: Engine) -> str:
    """The stored arena of ``tests.scoring.stored``: cohort c1 offered BIN on 2025-03-01 (round 0) and
    MULTI from 2025-03-02 (round 1), both resolved on 2025-03-04; VOID was never offered."""
    populate(engine)
    return engine.url.render_as_string(hide_password=False)


def _import(url: str, path: Path, *extra: str):
    return runner.invoke(
        app, ["data", "import-forecasts", str(path), "--cohort", "c1", "--database-url", url, *extra]
    )


def _csv(tmp_path: Path, *rows: str, name: str = "panel.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "".join(f"{row}\n" for row in rows))
    return path


def _board(url: str, *extra: str) -> dict[str, dict[str, Any]]:
    args = ["leaderboard", "--cohort", "c1", "--json", "--replicates", "50", "--database-url", url, *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return {row["agent"]: row for row in json.loads(result.stdout)["agents"]}


def test_a_panel_sits_beside_the_agents_on_the_same_events(url: str, tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        f"ann,{BIN},2025-03-01T00:00:00+00:00,0.9,",
        f"ann,{MULTI},2025-03-02T12:00:00Z,0.6,B",
        f"bob,{BIN},2025-03-01T00:00:00+00:00,0.3,",
    )
    result = _import(url, path)
    assert result.exit_code == 0, result.output
    assert (
        "Imported 3 forecasts by 2 forecasters into cohort c1 (2 seated as new external agents)"
        in result.stdout
    )
    board = _board(url, "--by", "stated_brier")
    ann, bob, llm = board["ann"], board["bob"], board["llm-1"]
    # ann: BIN YES won, (0.9 − 1)² = 0.01; MULTI B won, (0.6 − 1)² = 0.16: stated Brier 0.085.
    assert ann["stated_events"] == 2 and ann["stated_brier"] == pytest.approx(0.085)
    assert (ann["external"], ann["agent_kind"], ann["bets"], ann["return_pct"]) == (True, "external", 0, None)
    assert llm["external"] is False
    # bob states what llm-1 stated on BIN (NO 0.7 = YES 0.3): their comparison on it is exactly 0.
    assert bob["stated_brier"] == pytest.approx(0.49)
    compared = _board(url, "--by", "stated_brier_imputed")
    assert compared["ann"]["rank"] == 1
    # Imputed: ann's MULTI statement comes after round 1 (day 1, 00:00): that round takes the
    # price for all three outcomes (A .2, B .5, C .3; B won): .04, .25, .09; BIN .01. Each market
    # weighs once: (.01 + (.04 + .25 + .09) / 3) / 2.
    assert compared["ann"]["stated_brier_imputed"] == pytest.approx((0.01 + (0.04 + 0.25 + 0.09) / 3) / 2)
    assert compared["ann"]["imputed_share"] == pytest.approx(3 / 4)
    assert compared["bob"]["vs_leader_stated_brier_imputed_common_markets"] == 2


def test_a_forecast_counts_from_its_time(url: str, tmp_path: Path) -> None:
    assert _import(url, _csv(tmp_path, f"ann,{BIN},2025-03-02T00:00:00+00:00,0.9,")).exit_code == 0
    before = _board(url, "--as-of", "2025-03-01T12:00:00+00:00")["ann"]
    after = _board(url, "--as-of", "2025-03-02T12:00:00+00:00")["ann"]
    assert (before["provisional_events"], after["provisional_events"]) == (0, 1)
    # Open, it scores its distance from the latest price (YES 1 − 0.55 = 0.45): (0.9 − 0.45)².
    assert after["stated_brier_provisional"] == pytest.approx(0.45**2)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            (f"ann,{VOID},2025-03-01T00:00:00+00:00,0.5,",),
            f"row 1: market '{VOID}' was never offered to cohort c1",
        ),
        (
            (f"ann,{BIN},2025-03-04T00:00:00+00:00,0.5,",),
            f"row 1: time 2025-03-04T00:00:00+00:00 is not before market {BIN} resolved "
            "(2025-03-04T00:00:00+00:00)",
        ),
        (
            (f"ann,{BIN},2099-01-01T00:00:00+00:00,0.5,",),
            "row 1: time 2099-01-01T00:00:00+00:00 is in the future",
        ),
        (
            (f"ann,{MULTI},2025-03-02T00:00:00+00:00,0.5,",),
            f"row 1: market {MULTI} has outcomes A, B, C: give the outcome",
        ),
        (
            (f"hold,{BIN},2025-03-01T00:00:00+00:00,0.5,",),
            "row 1: 'hold' is an agent of cohort c1 of kind hold",
        ),
        (
            (f"ann,{BIN},2025-03-01T00:00:00+00:00,0.5,", f"ann,{BIN},2025-03-01T00:00:00Z,0.6,"),
            "row 2: the same forecaster, market, outcome and time as row 1",
        ),
        (
            (f"ann,{BIN},2025-03-01T00:00:00+00:00,1.2,",),
            "row 1, field 'probability': '1.2' is not a probability",
        ),
        ((f"ann,{BIN},2025-03-01,0.5,",), "row 1, field 'time': '2025-03-01' has no time zone"),
        (
            (f"a b,{BIN},2025-03-01T00:00:00+00:00,0.5,",),
            "row 1, field 'forecaster': 'a b' is not an agent name",
        ),
    ],
)
def test_a_bad_row_is_one_line_and_nothing_is_written(
    url: str, tmp_path: Path, rows: tuple[str, ...], message: str
) -> None:
    good = f"zed,{BIN},2025-03-01T00:00:00+00:00,0.5,"  # checked like the rest: never written alone
    result = _import(url, _csv(tmp_path, *rows, good))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert _counts(url) == (0, 0)


def test_a_second_import_of_the_same_forecasts_is_refused(url: str, tmp_path: Path) -> None:
    path = _csv(tmp_path, f"ann,{BIN},2025-03-01T00:00:00+00:00,0.9,")
    assert _import(url, path).exit_code == 0
    again = _import(url, path)
    assert (
        again.exit_code == 2
        and "row 1: already imported into cohort c1 (ann, polymarket:bin," in again.stderr
    )
    later = _csv(tmp_path, f"ann,{BIN},2025-03-02T00:00:00+00:00,0.8,", name="later.csv")
    assert _import(url, later).exit_code == 0  # a new forecast of the same forecaster stands from its time
    assert _counts(url) == (1, 2)


def test_jsonl_and_the_file_limits(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [
        {"forecaster": "model-x", "market_id": BIN, "time": "2025-03-01T00:00:00+00:00", "probability": 0.7},
        {
            "forecaster": "model-x",
            "market_id": MULTI,
            "time": "2025-03-02T00:00:00Z",
            "probability": 0.2,
            "outcome": "A",
        },
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.setattr(forecast_file, "MAX_ROWS", 1)
    limited = _import(url, path)
    assert limited.exit_code == 2 and f"error: {path}: more than 1 rows" in limited.stderr
    monkeypatch.setattr(forecast_file, "MAX_ROWS", 10)
    assert _import(url, path).exit_code == 0
    typo = tmp_path / "typo.jsonl"
    typo.write_text(json.dumps({**lines[0], "probabilty": 0.7}) + "\n")
    result = _import(url, typo)
    assert result.exit_code == 2 and "row 1: unknown field(s) 'probabilty'" in result.stderr
    assert _import(url, tmp_path / "panel.xlsx").stderr.endswith("expected a .csv or .jsonl file\n")


def _counts(url: str) -> tuple[int, int]:
    from arena.db.engine import make_engine

    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            agents = connection.execute(
                select(func.count()).select_from(AgentRow).where(AgentRow.kind == "external")
            ).scalar_one()
            forecasts = connection.execute(select(func.count()).select_from(ExternalForecastRow)).scalar_one()
    finally:
        engine.dispose()
    return int(agents), int(forecasts)
