"""`arena leaderboard` end to end on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.scoring import COLUMNS
from tests.scoring.stored import populated_database

runner = CliRunner()


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return populated_database(tmp_path_factory.mktemp("cli"))


def _run(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, ["leaderboard", *args], env=env)


def test_table_for_one_cohort(url: str) -> None:
    result = _run(
        "--cohort", "c1", "--wide", "--database-url", url, "--replicates", "50", env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    assert "Leaderboard — c1" in result.output
    lines = [line.split() for line in result.output.splitlines()]
    # llm-1 made +750 on 5,000 (+15%); one $500 bet on YES at 0.40, max bet 1,250, cash 5,000, YES
    # won. fa: c = 500 / 1,250 = 0.4, Brier (0.4 − 1)² = 0.36. kelly: φ = 500 / 5,000 = 0.1,
    # P = 0.4 + 0.1 · 0.6 = 0.46, Brier (0.46 − 1)² = 0.2916.
    KELLY = "0.292"
    # Brier 0.36 reads Poor while +15% reads Good: the labels disagree (§) and a footnote says so.
    # Stated, imputed: bin offered in round 0, llm-1 said YES 0.3 → (0.3 − 1)² = .49; multi offered
    # in round 1, its round-0 statements stand (A .1 → .01, B .8 → .04), C missing → price .3 → .09,
    # one market: .14 / 3. Mean over the two markets: (.49 + .0467) / 2 = .268. C was shown and
    # unstated: 1 of the 4 (round, market outcome) events, 25% > 10%: stated selectively (¤).
    # Stated overall: its stated events, all resolved, each market once: (.49 + (.01 + .04) / 2) / 2
    # = .2575 (the float lies just below: 0.257). One cohort: no adjusted Brier (—, with a note).
    # Tournament: llm-1 alone has coverage, so it is paid S / (S + 1) (s = −0.01, c = 0.33): 24.6%.
    row = ["1", "llm-1", "‡§¤", "5,750", "+750", "+15.0", "0.360", KELLY, "—", "—", "0.268", "0.257", "—"]
    assert [*row, "24.6%", "1", "100%", "—", "Good"] in lines
    # hold states nothing: it takes no part, so no stated score; no coverage, no take.
    hold = ["2", "hold", "†‡", "5,000", "0", "+0.0", "—", "—", "—", "—", "—", "—", "—", "0.0%", "0", "—", "—"]
    assert [*hold, "Neutral"] in lines
    assert "Adjusted Brier not given (llm-1): one cohort: its agents were offered the same markets" in (
        " ".join(result.output.split())
    )
    assert (
        "no forecast standing on this share of the rounds and markets that showed them a price: llm-1 (25%)."
        in (" ".join(result.output.split()))
    )
    assert "leakage guard: off for llm-1 (replay LLM without knowledge_cutoff)" in result.output
    assert "50 replicates, seed 0" in result.output
    note = "§ Brier (bets) and return disagree: llm-1 0.360 reads Poor, return +15.0% reads Good."
    assert note in result.output


def test_json_pools_every_cohort_with_all(url: str) -> None:
    result = _run("--json", "--all", "--replicates", "50", env={"ARENA_DATABASE_URL": url})
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["cohorts"] == ["c1", "c2"]
    assert (document["cohort_selection"], document["cohorts_left_out"]) == ("all", [])
    agents = {a["agent"]: a for a in document["agents"]}
    assert list(agents["llm-1"]) == list(COLUMNS)
    # llm-1 sat in both cohorts but never decided in c2: that seat is left out rather than adding
    # 10,000 of idle capital, so the return is 750 P/L on c1's 5,000 = 15% (not 750 / 15,000 = 5%).
    assert (agents["llm-1"]["cohorts"], agents["llm-1"]["pnl"]) == (1, 750.0)
    assert agents["llm-1"]["return_pct"] == pytest.approx(15.0)


def test_sort_and_point_in_time(url: str) -> None:
    result = _run(
        "--cohort",
        "c1",
        "--by",
        "brier",
        "--json",
        "--database-url",
        url,
        "--replicates",
        "20",
        "--as-of",
        "2025-03-02T00:00:00+00:00",
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["sort_by"], document["as_of"]) == ("brier", "2025-03-02T00:00:00+00:00")
    assert all(agent["resolved_bets"] == 0 for agent in document["agents"])  # nothing had resolved yet


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cohort", "nope"], "error: no cohort with id 'nope' (see `arena cohort list`)"),
        (["--by", "luck"], "error: --by 'luck' is not a metric"),
        (["--as-of", "2025-03-02"], "error: --as-of '2025-03-02': expected an ISO 8601 time with a zone"),
    ],
)
def test_bad_arguments_are_one_line_errors(url: str, args: list[str], message: str) -> None:
    result = _run(*args, "--database-url", url)
    assert result.exit_code == 2
    assert result.stderr.strip().startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_database_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "none" / "arena.db"
    result = _run("--database-url", f"sqlite:///{path}")
    assert result.exit_code == 2
    assert "error: No arena database at" in result.stderr
    assert not path.exists()
