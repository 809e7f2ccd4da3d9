"""Dashboard fixtures: a seeded SQLite database (built once), an empty one, and an AppTest runner.

``ARENA_DATABASE_URL`` points the app at a database, exactly as ``arena dashboard`` does; the
world has a secret planted in its rows and in the environment, so every page test also checks
that it never reaches the screen.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from arena.db.engine import make_engine, session_scope
from tests.dashboard.world import build_world

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
PLANTED = "sk-or-test-PLANTED-dashboard-4b8e2f"
Runner = Callable[..., AppTest]


@pytest.fixture(scope="session")
def world_url(sqlite_head: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("world") / "arena.db"
    shutil.copyfile(sqlite_head, path)
    engine = make_engine(f"sqlite:///{path}")
    build_world(engine, leak=PLANTED)
    engine.dispose()
    return f"sqlite:///{path}"


@pytest.fixture(scope="session")
def empty_url(sqlite_head: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("empty") / "arena.db"
    shutil.copyfile(sqlite_head, path)
    return f"sqlite:///{path}"


@pytest.fixture
def dashboard(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Runner]:
    """``dashboard(url)(page, cohort=..., **widgets)`` runs the app on ``url`` and opens ``page``."""
    monkeypatch.setenv("OPENROUTER_API_KEY", PLANTED)

    def on(url: str) -> Runner:
        monkeypatch.setenv("ARENA_DATABASE_URL", url)
        return run_page

    return on


def world_copy(world_url: str, path: Path, edit: Callable[[Session], object]) -> str:
    """A copy of the world database at ``path`` with ``edit`` applied in one transaction; its URL."""
    shutil.copyfile(world_url.removeprefix("sqlite:///"), path)
    engine = make_engine(f"sqlite:///{path}")
    with session_scope(engine) as session:
        edit(session)
    engine.dispose()
    return f"sqlite:///{path}"


def run_page(page: str, *, cohort: str | None = None, **widgets: object) -> AppTest:
    """Open ``page`` (a file name in dashboard/app_pages) like a user: app first, then the page."""
    app = AppTest.from_file(str(APP), default_timeout=60)
    if cohort is not None:
        app.session_state["cohort"] = cohort
    app.run()
    if page != "leaderboard":
        app.switch_page(f"app_pages/{page}.py").run()
    if widgets:
        for key, value in widgets.items():
            app.session_state[key] = value
        app.run()
    return app


def screen_text(app: AppTest) -> str:
    """Everything the app put on screen, as the text of its element tree (tables included)."""
    nodes, stack = [], [app._tree]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(getattr(node, "children", {}).values())
    return "\n".join(str(getattr(n, "proto", "")) for n in nodes)
