"""``arena db upgrade`` / ``arena db revision`` on a real database of each backend, and that no
other command (reading or writing, nor ``arena serve`` or a worker) upgrades a database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import redact_url
from arena.db.migrate import current_revision, head_revision, upgrade


def test_upgrade_then_revision_reports_up_to_date(db_url: str) -> None:
    env = {"ARENA_DATABASE_URL": db_url}
    before = CliRunner().invoke(app, ["db", "revision"], env=env)
    assert before.exit_code == 0 and "needs" in before.output
    assert current_revision(db_url) is None
    result = CliRunner().invoke(app, ["db", "upgrade"], env=env)
    assert result.exit_code == 0, result.output
    assert current_revision(db_url) == head_revision()
    after = CliRunner().invoke(app, ["db", "revision"], env=env)
    assert "up to date" in after.output


OLD = "0012"  # the revision before the newest


def _one_line(result: Result) -> str:
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["status", "--json"],
        ["cohort", "list"],
        ["cohort", "show", "c1"],
        ["markets", "pending"],
        ["leaderboard", "--cohort", "c1"],
        ["cohort", "launch", "data/configs/demo.toml"],  # writing commands refuse it too
    ],
    ids=" ".join,
)
def test_a_command_meeting_an_older_schema_says_so_and_changes_nothing(db_url: str, args: list[str]) -> None:
    upgrade(db_url, OLD)
    result = CliRunner().invoke(app, args, env={"ARENA_DATABASE_URL": db_url})
    assert result.exit_code == 2, result.output
    line = _one_line(result)
    assert f"is at schema revision {OLD}; this arena needs {head_revision()}: run `arena db upgrade`" in line
    assert current_revision(db_url) == OLD


def test_reading_commands_never_create_a_database(tmp_path: Path, db_url: str) -> None:
    missing = f"sqlite:///{tmp_path / 'none' / 'arena.db'}"
    for url in (missing, db_url):  # no file; an empty database
        for args in (["status"], ["cohort", "list"]):
            result = CliRunner().invoke(app, args, env={"ARENA_DATABASE_URL": url})
            assert result.exit_code == 2 and ("arena demo" in _one_line(result)), result.output
    assert not (tmp_path / "none").exists()
    assert current_revision(db_url) is None


def _process(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_DATABASE_URL": url}
    command = [sys.executable, "-m", "arena.cli", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_serve_meeting_an_older_schema_exits_2_in_one_line(db_url: str) -> None:
    upgrade(db_url, OLD)
    done = _process("serve", "--poll", "0.3", url=db_url)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {redact_url(db_url)} is at schema revision {OLD}; this arena needs {head_revision()}: "
        "run `arena db upgrade` (stop `arena serve` and the workers first)"
    ]
    assert current_revision(db_url) == OLD


@pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_worker_meeting_an_older_schema_exits_2_in_one_line(db_url: str) -> None:
    upgrade(db_url, OLD)
    done = _process("worker", "--until-idle", url=db_url)
    assert done.returncode == 2 and "run `arena db upgrade`" in done.stderr, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert current_revision(db_url) == OLD
    assert CliRunner().invoke(app, ["db", "upgrade"], env={"ARENA_DATABASE_URL": db_url}).exit_code == 0
    assert current_revision(db_url) == head_revision()
