"""A cohort an older version let launch with values now out of range (a bankroll of 1e400, a
negative seed) never breaks ``arena leaderboard`` for the other cohorts: all cohorts are ranked
without it, with one line saying why it is left out; asked for by id, it is a one-line error.
Both backends."""

from __future__ import annotations

import json

from sqlalchemy import Engine
from typer.testing import CliRunner

from arena.cli import app
from tests.dashboard.world import LIVE, POISONED, REPLAY, add_poisoned_cohort, build_world

REASON = "rules.bankroll: must be at most 1,000,000,000 (the ledger's range), got 1E+400"


def arena(engine: Engine, *args: str) -> tuple[int, str, str]:
    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(app, [*args, "--database-url", url])
    return result.exit_code, result.stdout, result.stderr


def test_all_cohorts_are_ranked_without_the_poisoned_one(engine: Engine) -> None:
    build_world(engine)
    add_poisoned_cohort(engine)
    code, out, err = arena(engine, "leaderboard", "--all", "--json", "--replicates", "20")
    assert code == 0, err
    document = json.loads(out)
    assert document["cohorts"] == [LIVE, REPLAY]
    assert err.strip().splitlines() == [f"note: cohort {POISONED} is not scored: {REASON}"]
    code, out, err = arena(engine, "leaderboard", "--all", "--pool-by", "model", "--replicates", "20")
    assert code == 0, err


def test_the_poisoned_cohort_by_id_is_one_line(engine: Engine) -> None:
    build_world(engine)
    add_poisoned_cohort(engine)
    code, _, err = arena(engine, "leaderboard", "--cohort", POISONED)
    assert code == 2
    assert err.strip().splitlines() == [f"error: cohort {POISONED!r} cannot be scored: {REASON}"]
    code, _, err = arena(engine, "cohort", "show", POISONED)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "cannot be shown" in err
