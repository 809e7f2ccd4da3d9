"""`arena compare` on cohorts replayed through the CLI: paired, market-clustered intervals on each
agent's differences, verdicts that claim only what the data support, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from arena.cli import app
from tests.commands.cohort_pairs import MARKETS, replayed


@pytest.fixture(scope="module")
def world(sqlite_head: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    return replayed(sqlite_head, tmp_path_factory.mktemp("compare"))


def arena(url: str, *args: str) -> Result:
    return CliRunner().invoke(app, [*args, "--database-url", url], env={"COLUMNS": "80"})


def compared(url: str, *args: str) -> dict[str, Any]:
    result = arena(url, "compare", *args, "--json")
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def row(document: dict[str, Any], agent: str, metric: str) -> dict[str, Any]:
    (found,) = [r for r in document["comparisons"] if r["agent"] == agent and r["metric"] == metric]
    return found


def test_a_difference_constant_across_markets_has_a_zero_width_paired_interval(
    world: tuple[str, dict[str, str]],
) -> None:
    url, ids = world
    document = compared(url, ids["reference"], ids["shifted"], "--min-markets", "2")
    assert document["common_markets"] == list(MARKETS)
    stated = row(document, "s", "stated_brier")
    assert stated["common_markets"] == 6
    assert stated["diff"] == pytest.approx(stated["value"] - stated["reference_value"])
    assert stated["diff"] > 0.05
    # Paired by market: each market's difference is the same, so every replicate's is too...
    assert stated["diff_hi"] - stated["diff_lo"] == pytest.approx(0.0, abs=1e-12)
    assert stated["diff_lo"] == pytest.approx(stated["diff"], abs=1e-12)
    # ...while the reference's own Brier varies by market: its interval alone is wide.
    board = json.loads(arena(url, "leaderboard", "--cohort", ids["reference"], "--json").stdout)
    own = next(a for a in board["agents"] if a["agent"] == "s")
    assert own["stated_brier_hi"] - own["stated_brier_lo"] > 0.05
    assert stated["verdict"] == "supported"
    shown = f"{stated['diff']:.3f} [{stated['diff']:.3f}, {stated['diff']:.3f}]"
    assert stated["summary"] == f"B's Brier (stated) is higher by {shown} over 6 common markets: supported"
    # The same bets in both cohorts: the same Brier (bets) and return on every market.
    assert row(document, "s", "brier")["verdict"] == "identical"
    assert row(document, "s", "return_pct")["verdict"] == "identical"
    # kelly sits in the reference alone: listed, not compared.
    cohorts = {c["letter"]: c for c in document["cohorts"]}
    assert cohorts["A"]["id"] == ids["reference"] and cohorts["A"]["reference"]
    assert cohorts["A"]["unmatched_agents"] == ["kelly"]


def test_the_default_minimum_of_markets_withholds_every_verdict_on_six_markets(
    world: tuple[str, dict[str, str]],
) -> None:
    url, ids = world
    document = compared(url, ids["reference"], ids["shifted"])
    assert document["min_markets"] == 30
    assert {r["verdict"] for r in document["comparisons"]} <= {
        "too few markets",
        "not comparable",
        "identical",
    }
    stated = row(document, "s", "stated_brier")
    assert stated["summary"] == (
        "Brier (stated): only 6 common markets (at least 30 resolved ones needed): no conclusion"
    )


def test_one_shared_market_is_no_conclusion_whatever_the_minimum(world: tuple[str, dict[str, str]]) -> None:
    url, ids = world
    document = compared(url, ids["reference"], ids["one-market"], "--min-markets", "2")
    assert document["common_markets"] == [MARKETS[0]]
    stated = row(document, "s", "stated_brier")
    assert stated["common_markets"] == 1
    assert stated["verdict"] == "too few markets"
    assert stated["summary"].endswith("no conclusion")
    assert "supported" not in {r["verdict"] for r in document["comparisons"]}
    below = arena(url, "compare", ids["reference"], ids["one-market"], "--min-markets", "1")
    assert below.exit_code == 2  # one market can never be enough
    assert below.stderr == "error: min_markets must be at least 2, got 1\n"


def test_pooled_by_model_matches_one_script_under_two_names(world: tuple[str, dict[str, str]]) -> None:
    url, ids = world
    by_name = compared(url, ids["reference"], ids["renamed"])
    assert by_name["comparisons"] == []
    assert by_name["cohorts"][1]["unmatched_agents"] == ["t"]
    by_model = compared(url, ids["reference"], ids["renamed"], "--pool-by", "model")
    metrics = {r["metric"]: r for r in by_model["comparisons"]}
    assert set(metrics) == {"return_pct", "brier", "stated_brier"}
    assert {r["verdict"] for r in metrics.values()} == {"too few markets"}
    assert all(r["diff"] == 0 for r in metrics.values())


def test_the_table_fits_80_columns_and_names_each_cohort_by_its_letter(
    world: tuple[str, dict[str, str]],
) -> None:
    url, ids = world
    result = arena(url, "compare", ids["reference"], ids["shifted"], "--min-markets", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert f"  A  {ids['reference']}" in lines and f"  B  {ids['shifted']}" in lines
    assert "6 markets bet or stated on in every cohort" in result.stdout
    text = " ".join(result.stdout.split())
    assert "B's Brier (stated) is higher by" in text
    assert "Brier (bets): the same on all 6 common markets: no difference" in text
    assert "Not compared (no namesake): kelly of" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "reference"], "error: no cohort with id 'nope' (see `arena cohort list`)"),
        (["reference"], "error: compare needs at least two different cohort ids"),
        (["reference", "reference"], "error: compare needs at least two different cohort ids"),
        (["reference", "idle"], "have no market in common"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(
    world: tuple[str, dict[str, str]], args: list[str], message: str
) -> None:
    url, ids = world
    result = arena(url, "compare", *[ids.get(a, a) for a in args])
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(message) or message in line
