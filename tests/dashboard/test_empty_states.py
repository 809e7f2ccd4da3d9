"""With nothing to show, every page says what to do (st.info), never a traceback."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.dashboard.conftest import Runner

PAGES = ("leaderboard", "cohort", "agent", "markets", "calibration")
Dashboard = Callable[[str], Runner]


def _explains(app, *phrases: str) -> None:  # type: ignore[no-untyped-def]
    assert [e.value for e in app.exception] == []
    message = " ".join(i.value for i in app.info)
    for phrase in phrases:
        assert phrase in message, message


@pytest.mark.parametrize("page", PAGES)
def test_missing_database_says_to_run_the_demo_and_creates_nothing(
    page: str, dashboard: Dashboard, tmp_path: Path
) -> None:
    missing = tmp_path / "home" / "arena.db"
    app = dashboard(f"sqlite:///{missing}")(page)
    _explains(app, f"No arena database at sqlite:///{missing} yet", "arena demo")
    assert not missing.parent.exists()  # the dashboard only reads: it never creates a database


@pytest.mark.parametrize("page", PAGES)
def test_database_without_cohorts_says_to_run_the_demo(
    page: str, dashboard: Dashboard, empty_url: str
) -> None:
    app = dashboard(empty_url)(page)
    _explains(app, "The database has no cohorts yet.", "arena demo")


def test_a_file_that_is_not_an_arena_database_is_explained(dashboard: Dashboard, tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    sqlite3.connect(path).close()
    app = dashboard(f"sqlite:///{path}")("leaderboard")
    _explains(app, "holds no arena data yet", "arena demo")


def test_unreachable_server_is_explained_without_its_password(dashboard: Dashboard) -> None:
    app = dashboard("postgresql://arena:s3cret-pass@127.0.0.1:9/arena")("leaderboard")
    _explains(app, "Cannot open postgresql+psycopg://arena:***@127.0.0.1:9/arena")
    assert "s3cret-pass" not in " ".join(i.value for i in app.info)
