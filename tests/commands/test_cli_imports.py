"""The CLI imports only what the invoked command needs (``arena.cli`` loads commands lazily).

Each command runs in a fresh interpreter, the way a user starts it, and reports which modules it
ended up with: the report builder, figures, plotly, Streamlit and the dashboard stay out of
``--help``, ``cohort list``, ``status`` and ``leaderboard``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import COMMANDS, app, load
from tests.engine.helpers import synthetic_dataset
from tests.scoring.stored import populated_database

ROOT = Path(__file__).resolve().parents[2]
# Run the CLI, then print the names of the loaded modules (stdout of the command goes to stderr).
CHILD = """
import contextlib, json, sys
with contextlib.redirect_stdout(sys.stderr):
    from arena.cli import app
    try:
        app(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
HEAVY = ("plotly", "streamlit", "dashboard", "arena.figures", "arena.reports.bundle", "arena.reports.html")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return populated_database(tmp_path_factory.mktemp("imports"))


def _modules(*args: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout)
    assert result["code"] in (0, None), done.stderr
    return list(result["modules"])


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_help_imports_no_command(url: str) -> None:
    modules = _modules("--help")
    assert not [m for m in modules if m.startswith("arena.commands.")]
    assert "sqlalchemy" not in modules and not _heavy(modules)


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (
            ("cohort", "list"),
            # the ARENA_* settings (pydantic-settings) are read only without --database-url
            (
                "arena.scoring",
                "arena.scheduling",
                "alembic",
                "agents.registry",
                "markets.replay",
                "polars",
                "pydantic_settings",
            ),
        ),
        (
            ("status",),
            # the scheduler and the jobs' engine are for `arena serve`; Alembic only to migrate
            (
                "arena.scoring",
                "arena.engine.runtime.cohort",
                "arena.scheduling.jobs",
                "apscheduler",
                "alembic",
            ),
        ),
        (
            ("leaderboard", "--cohort", "c1", "--replicates", "20"),
            # Alembic, the HTTP client and the bettors cost more start-up than the scoring itself;
            # the settings as for `cohort list`; TOML only to read a config file; scoring reads
            # through arena.db.read_tables, so neither the ORM, the models nor (on SQLite) the
            # PostgreSQL dialect.
            (
                "arena.db.models",
                "sqlmodel",
                "sqlalchemy.orm",
                "sqlalchemy.dialects.postgresql",
                "arena.scheduling",
                "arena.engine.replay.runner",
                "alembic",
                "httpx",
                "agents.registry",
                "arena.core.settings",
                "pydantic_settings",
                "tomllib",
            ),
        ),
    ],
)
def test_a_command_imports_only_what_it_needs(
    url: str, args: tuple[str, ...], absent: tuple[str, ...]
) -> None:
    modules = _modules(*args, "--database-url", url)
    assert _heavy(modules) == []
    assert [m for m in modules if m.startswith(absent)] == []


def _replay_config(directory: Path, agents: str) -> str:
    dataset = synthetic_dataset(directory / "data", markets=6, days=14)
    config = directory / "c.toml"
    config.write_text(
        f'name = "imports"\ndataset = "{dataset}"\nstart = 2025-01-01T00:00:00Z\nseed = 3\n'
        '[schedule]\nevery = "3d"\nrounds = 2\n' + agents,
        encoding="utf-8",
    )
    return str(config)


# What a replay of baselines never uses: the HTTP client (with its command-line module's imports),
# the LLM bettor, and the live market source with the venues' parsers.
LIVE_AND_LLM = ("httpx", "agents.llm.bettor", "agents.llm.limiter", "arena.db.market_source", "markets.http")


def test_a_replay_of_baselines_imports_no_http_client(tmp_path: Path) -> None:
    config = _replay_config(tmp_path, '[[agents]]\nname = "fav"\nkind = "favorite"\n')
    modules = _modules("replay", config, "--database-url", f"sqlite:///{tmp_path / 'r.db'}")
    assert "arena.engine.replay.runner" in modules
    assert [m for m in modules if m.startswith(LIVE_AND_LLM)] == []


def test_a_replay_with_an_llm_agent_loads_its_client(tmp_path: Path) -> None:
    """The control: the same check sees httpx and the limiter when an LLM agent is built (its
    provider is unreachable, so it fails every round, and the run is allowed to carry on; a
    baseline keeps the rounds from failing whole)."""
    baseline = '[[agents]]\nname = "fav"\nkind = "favorite"\n'
    agent = (
        baseline + '[[agents]]\nname = "llm"\nkind = "llm"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n'
    )
    config = _replay_config(tmp_path, agent + "[llm_limits]\nrequests_per_second = 5\nmax_in_flight = 2\n")
    args = ("replay", config, "--allow-agent-failures", "--database-url", f"sqlite:///{tmp_path / 'r.db'}")
    modules = _modules(*args)
    assert "httpx" in modules and "agents.llm.limiter" in modules


def test_report_still_loads_the_report_builder(url: str, tmp_path: Path) -> None:
    """The control: the same check sees plotly when a command really uses it."""
    modules = _modules("report", "c1", "--out", str(tmp_path / "r"), "--no-zip", "--database-url", url)
    assert "arena.reports.bundle" in modules and "plotly" in modules


def test_the_listed_help_is_each_commands_own() -> None:
    """``arena --help`` prints the lines of ``COMMANDS``; they must say what the loaded command says."""
    for name, entry in COMMANDS.items():
        first_paragraph = (load(name).help or "").split("\n\n")[0]
        assert " ".join(first_paragraph.split()) == entry.help, name


def test_an_unknown_command_is_refused_with_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["leaderbord"])
    assert result.exit_code == 2
    assert "No such command 'leaderbord'. Did you mean 'leaderboard'?" in result.output
