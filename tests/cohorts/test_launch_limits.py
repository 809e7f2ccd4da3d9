"""Configs that used to launch and crash later are refused at launch: one line naming the field
and the limit, exit 2, no cohort written. And a launch says what the cohort implies."""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import CohortRow
from markets.replay import DatasetInfo, write_dataset
from markets.replay.format import content_hash
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue
from tests.engine.helpers import tiny_dataset

HOLD = '[[agents]]\nname = "hold"\nkind = "hold"\n'
LLM = (
    '[[agents]]\nname = "llm"\nkind = "llm"\nmodel = "m"\nbase_url = "http://127.0.0.1:1/v1"\n'
    + 'api_key_env = ""\n'
)


def launch(tmp_path: Path, text: str, dataset: Path | None = None, **env: str) -> tuple[int, list[str], int]:
    """Exit code, output lines and how many cohorts exist after ``arena cohort launch``."""
    dataset = dataset or tiny_dataset(tmp_path / "data")
    config = tmp_path / "cohort.toml"
    config.write_text(f'name = "limits"\ndataset = "{dataset}"\n{text}', encoding="utf-8")
    tomllib.loads(config.read_text())
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    result = CliRunner().invoke(
        app, ["cohort", "launch", str(config), "--database-url", db], env={"COLUMNS": "300", **env}
    )
    if not (tmp_path / "arena.db").exists():  # a failed launch removes the database it created
        return result.exit_code, result.output.strip().splitlines(), 0
    with Session(make_engine(db)) as session:
        cohorts = session.exec(select(func.count()).select_from(CohortRow)).one()
    return result.exit_code, result.output.strip().splitlines(), cohorts


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[rules]\nbankroll = "1e400"\n',
            "rules.bankroll: must be at most 1,000,000,000 (the ledger's range)",
        ),
        ('[rules]\nbankroll = "1e30"\n', "rules.bankroll: must be at most 1,000,000,000"),
        ("[rules]\nbankroll = 1e400\n", "rules.bankroll: Input should be a finite number"),
        (
            '[rules]\nbankroll = "10000.123456789123456789"\n',
            "rules.bankroll: must have at most 6 decimal places (the ledger's micro-dollar)",
        ),
        ('[rules]\nmin_bet = "1e999"\n', "rules.min_bet: must be at most 1,000,000,000"),
        ("seed = -7\n", "seed: Input should be greater than or equal to 0"),
        ("seed = 99999999999\n", "seed: Input should be less than or equal to 2147483647"),
        ("[schedule]\nrounds = 1e11\n", "schedule.rounds: Input should be less than or equal to 100000"),
        (
            '[schedule]\nevery = "99999999999d"\n',
            "schedule.every: expected a positive duration of at most 36500d",
        ),
        (
            '[schedule]\nevery = "36500d"\nrounds = 3\n',
            "schedule: every × rounds spans 109,500 days; at most 36500d",
        ),
        ('[marks]\nevery = "99999999999d"\n', "marks.every: expected a positive duration of at most 36500d"),
        ("[universe]\nmax_days_to_close = inf\n", "universe.max_days_to_close: Input should be less than"),
        ("[budget]\nmax_cost_usd = nan\n", "budget.max_cost_usd: Input should be a finite number"),
        ("start = 0001-01-01T00:00:00Z\n", "start: 0001-01-01T00:00:00+00:00 is outside the supported range"),
        (
            '[marks]\nevery = "1s"\n',
            "marks.every: a mark every 1s is 1,641,601 marks over the cohort; at most 100,000",
        ),
    ],
)
def test_an_out_of_range_config_is_refused_at_launch(tmp_path: Path, text: str, message: str) -> None:
    code, lines, cohorts = launch(tmp_path, text + HOLD)
    assert code == 2, lines
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert cohorts == 0


def test_a_dataset_dated_in_year_one_is_refused_not_replayed_for_two_thousand_years(tmp_path: Path) -> None:
    market = Market(venue=Venue.POLYMARKET, venue_id="old", question="Ancient?", volume=Decimal(1))
    times = (datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 1, 8, tzinfo=UTC))
    prices = [
        PriceSnapshot(market.market_id, {"YES": Decimal("0.5"), "NO": Decimal("0.5")}, t, "t") for t in times
    ]
    resolution = Resolution.binary(market.market_id, ResolutionKind.YES, times[1], "t")
    info = DatasetInfo(name="old", version="1", source="tests", license="CC0", created_with="tests")
    write_dataset(tmp_path / "old", markets=[market], prices=prices, resolutions=[resolution], info=info)
    # The writer refuses such a date: a dataset edited by hand is what can still hold one.
    folder = tmp_path / "old"
    csv = folder / "prices.csv"
    csv.write_text(csv.read_text(encoding="utf-8").replace("2025-01-01", "0001-01-01"), encoding="utf-8")
    info_file = folder / "dataset.json"
    stored = json.loads(info_file.read_text(encoding="utf-8"))
    info_file.write_text(json.dumps({**stored, "content_hash": content_hash(folder)}), encoding="utf-8")
    code, lines, cohorts = launch(tmp_path, HOLD, dataset=folder)
    assert code == 2 and cohorts == 0, lines
    assert len(lines) == 1 and lines[0].startswith("error: ") and "0001-01-01" in lines[0], lines


@pytest.mark.parametrize(
    ("every", "agents", "message"),
    [
        ("10s", 1, "schedule: rounds every 10s until the data ends are 164,161 rounds; at most 100,000"),
        (
            "1m",
            200,
            "agents: 200 agents × 27,361 rounds are 5,472,200 decisions; at most 5,000,000 per cohort",
        ),
    ],
)
def test_a_cohort_implying_too_many_rounds_or_decisions_is_refused(
    tmp_path: Path, every: str, agents: int, message: str
) -> None:
    seats = "".join(f'[[agents]]\nname = "h{i}"\nkind = "hold"\n' for i in range(agents))
    code, lines, cohorts = launch(tmp_path, f'[schedule]\nevery = "{every}"\n[marks]\nevery = "1d"\n' + seats)
    assert code == 2 and cohorts == 0, lines
    assert len(lines) == 1 and message in lines[0]


def test_a_launch_says_what_the_cohort_implies(tmp_path: Path) -> None:
    code, lines, cohorts = launch(tmp_path, "start = 2025-01-01T00:00:00Z\n" + HOLD + LLM)
    assert code == 0 and cohorts == 1, lines
    # the tiny dataset spans 19 days: weekly rounds on days 0, 7, 14; daily marks on days 0..19
    assert "implies 3 rounds, 20 marks, 6 agent decisions (3 of them LLM calls)" in lines


def test_a_secret_written_into_an_agents_headers_is_refused_at_launch(tmp_path: Path) -> None:
    code, lines, cohorts = launch(tmp_path, LLM + 'extra_headers = { Cookie = "session=c00kie-secret-1" }\n')
    assert code == 2 and cohorts == 0, lines
    assert len(lines) == 1 and "the value of 'Cookie' must name an environment variable" in lines[0]
    assert "c00kie-secret-1" not in lines[0]
