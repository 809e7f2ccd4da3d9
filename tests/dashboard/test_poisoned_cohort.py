"""A cohort an older version let launch with values now out of range (a bankroll of 1e400, a
negative seed) never breaks the dashboard: every page of every other cohort, and of all cohorts
pooled, runs as before, and the poisoned cohort's own pages say in one line why it is not shown."""

from __future__ import annotations

import shutil

import pytest

from arena.db.engine import make_engine
from arena.reports.escaping import WORD_JOINER
from tests.dashboard.conftest import Runner, screen_text
from tests.dashboard.world import POISONED, REPLAY, add_poisoned_cohort

PAGES = (
    "leaderboard",
    "cohort",
    "agent",
    "calibration",
    "compare",
    "cost_vs_score",
    "markets",
    "market_view",
)


@pytest.fixture(scope="module")
def poisoned_url(world_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    copy = tmp_path_factory.mktemp("poisoned") / "arena.db"
    shutil.copyfile(world_url.removeprefix("sqlite:///"), copy)
    engine = make_engine(f"sqlite:///{copy}")
    add_poisoned_cohort(engine)
    engine.dispose()
    return f"sqlite:///{copy}"


@pytest.mark.parametrize("cohort", [REPLAY, "__all__"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_of_the_other_cohorts_runs(dashboard, poisoned_url: str, page: str, cohort: str) -> None:  # type: ignore[no-untyped-def]
    run: Runner = dashboard(poisoned_url)
    app = run(page, cohort=cohort)
    assert [e.value for e in app.exception] == []
    if page == "leaderboard" and cohort == "__all__":
        notes = " ".join(w.value for w in app.warning)
        assert f"{POISONED} is not scored: rules.bankroll: must be at most 1,000,000,000" in notes.replace(
            "\\", ""
        ).replace(WORD_JOINER, "")


@pytest.mark.parametrize("page", PAGES)
def test_the_poisoned_cohorts_pages_say_why_in_one_line(dashboard, poisoned_url: str, page: str) -> None:  # type: ignore[no-untyped-def]
    app = dashboard(poisoned_url)(page, cohort=POISONED)
    assert [e.value for e in app.exception] == []
    assert "Traceback" not in screen_text(app)
    (shown,) = [e.value for e in app.error]
    assert shown.startswith(f"Cohort {POISONED} cannot be shown: ") and "\n" not in shown
