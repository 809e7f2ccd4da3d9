"""One cohort unless asked: the latest by default, ``--all`` pools those that ran and names the
rest, named cohorts are scored whatever their status; on SQLite and PostgreSQL, and through
``arena leaderboard``."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine, session_scope
from arena.scoring.load.cohort_choice import CohortChoice, choose_cohorts, cohort_line
from arena.scoring.load.rows import LoadError
from tests.db.rows import T0, cohort
from tests.scoring.stored import T0 as STORED_T0
from tests.scoring.stored import populated_database

runner = CliRunner()
# (id, status, hours after T0 it was created): "b-new" is the latest although "z-old" sorts last
COHORTS = [("a-done", "completed", 1), ("z-old", "running", 0), ("b-new", "paused", 3), ("p", "pending", 2)]


def _add(engine: Engine, rows: list[tuple[str, str, int]], *, start: datetime = T0) -> None:
    with session_scope(engine) as session:
        for cohort_id, status, hours in rows:
            row = cohort(cohort_id)
            row.status, row.created_at = status, start + timedelta(hours=hours)
            session.add(row)


def test_the_latest_alone_unless_all_or_named(engine: Engine) -> None:
    assert choose_cohorts(engine) == CohortChoice((), "latest")  # an empty database: nothing to score
    _add(engine, [*COHORTS, ("x", "cancelled", 4)])
    # "x" is newest of all but cancelled: the latest is still the newest cohort, whatever its status
    assert choose_cohorts(engine) == CohortChoice(("x",), "latest")
    pooled = choose_cohorts(engine, pool_all=True)
    assert pooled == CohortChoice(("a-done", "b-new", "z-old"), "all", (("p", "pending"), ("x", "cancelled")))
    assert choose_cohorts(engine, ["p", "a-done", "p"]) == CohortChoice(("p", "a-done"), "named")
    with pytest.raises(LoadError, match="no cohort with id 'nope'"):
        choose_cohorts(engine, ["nope"])
    with pytest.raises(LoadError, match="give one or the other"):
        choose_cohorts(engine, ["p"], pool_all=True)


def test_every_pooled_view_names_its_cohorts_in_one_line() -> None:
    pooled = {"cohorts": ["a", "b"], **CohortChoice(("a", "b"), "all", (("p", "pending"),)).json()}
    assert cohort_line(pooled) == "2 cohorts pooled: a, b; left out (never ran or stopped): p (pending)."
    assert (
        cohort_line({"cohorts": ["b"], **CohortChoice(("b",), "latest").json()}) == "Cohort: b (the latest)."
    )
    assert cohort_line({"cohorts": ["a", "b"], **CohortChoice(("a", "b"), "named").json()}) == (
        "2 cohorts pooled: a, b."
    )


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The CLI tests' two cohorts c1 and c2 (created together: c2 is the latest by id), plus a
    pending and a cancelled one created earlier."""
    source = populated_database(tmp_path_factory.mktemp("stored"))
    path = tmp_path_factory.mktemp("choice") / "arena.db"
    shutil.copyfile(source.removeprefix("sqlite:///"), path)
    engine = make_engine(f"sqlite:///{path}")
    _add(engine, [("c0-pending", "pending", -2), ("c0-stopped", "cancelled", -1)], start=STORED_T0)
    engine.dispose()
    return f"sqlite:///{path}"


def _board(url: str, *args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["leaderboard", "--json", "--replicates", "20", "--database-url", url, *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _words(text: str) -> str:
    """The printed text with the table's line folding undone."""
    return " ".join(text.split())


def test_the_cli_shows_the_latest_cohort_and_names_it(url: str) -> None:
    document = _board(url)
    assert (document["cohorts"], document["cohort_selection"]) == (["c2"], "latest")
    # c2's only agent, llm-1, never decided there: it is worth its bankroll, return 0
    (llm,) = document["agents"]
    assert (llm["agent"], llm["pnl"], llm["return_pct"]) == ("llm-1", 0.0, 0.0)
    table = runner.invoke(
        app, ["leaderboard", "--replicates", "20", "--database-url", url], env={"COLUMNS": "200"}
    )
    said = "Cohort: c2 (the latest). --cohort ID picks another; --all pools every cohort that ran."
    assert said in _words(table.output)


def test_all_pools_what_ran_and_names_what_it_left_out(url: str) -> None:
    document = _board(url, "--all")
    assert document["cohorts"] == ["c1", "c2"]
    assert document["cohorts_left_out"] == [
        {"cohort": "c0-pending", "status": "pending"},
        {"cohort": "c0-stopped", "status": "cancelled"},
    ]
    # llm-1: +750 on c1's 5,000 (its idle c2 seat is left out): 15%
    llm = next(a for a in document["agents"] if a["agent"] == "llm-1")
    assert llm["return_pct"] == pytest.approx(15.0)
    table = runner.invoke(
        app, ["leaderboard", "--all", "--replicates", "20", "--database-url", url], env={"COLUMNS": "300"}
    )
    assert (
        "2 cohorts pooled: c1, c2; left out (never ran or stopped): c0-pending (pending), "
        "c0-stopped (cancelled)." in _words(table.output)
    )
    named = _board(url, "--cohort", "c0-pending", "--cohort", "c1")
    assert (named["cohorts"], named["cohort_selection"]) == (["c0-pending", "c1"], "named")


def test_all_and_cohort_together_are_refused(url: str) -> None:
    result = runner.invoke(app, ["leaderboard", "--all", "--cohort", "c1", "--database-url", url])
    assert result.exit_code == 2
    assert (
        result.stderr.strip()
        == "error: --all pools every cohort and --cohort names some: give one or the other"
    )
