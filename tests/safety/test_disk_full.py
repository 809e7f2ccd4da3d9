"""A full disk during a replay or a report ends the command in one line, with nothing half-written.

Two ways of filling the disk: a real one (a small tmpfs, mounted when the tests run as root, as
in the development container), and SQLite's own "database or disk is full" raised at the commit
of a round (anywhere): the same error, whatever the machine.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from typer.testing import CliRunner

from arena.cli import app
from arena.engine.rounds import run as rounds_run
from tests.dashboard.world import REPLAY, build_world
from tests.engine.helpers import tiny_dataset

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "configs" / "demo-baselines.toml"
FULL = (
    "error: the disk is full: what was stored before is kept whole, nothing half-written; free some "
    "space and run the command again (a replay resumes where it stopped)"
)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``mount(size)``: a fresh tmpfs of ``size`` (e.g. ``"600k"``), unmounted after the test."""
    mounted: list[Path] = []
    mount_tool, umount_tool = shutil.which("mount"), shutil.which("umount")

    def mount(size: str) -> Path:
        target = tmp_path / f"disk{len(mounted)}"
        target.mkdir()
        command = [str(mount_tool), "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)]
        if mount_tool is None or subprocess.run(command, capture_output=True, check=False).returncode:
            pytest.skip("mounting a small tmpfs needs root; test_a_full_disk_at_a_rounds_commit covers it")
        mounted.append(target)
        return target

    yield mount
    for target in mounted:
        subprocess.run([str(umount_tool), str(target)], check=False)


def _last_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    return stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_a_replay_on_a_full_disk_is_one_line(small_disk: Callable[[str], Path], tmp_path: Path) -> None:
    disk = small_disk("600k")  # the schema fits; the demo's first rounds do not
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "replay",
            str(DEMO),
            "--database-url",
            f"sqlite:///{disk / 'a.db'}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ARENA_HOME": str(tmp_path / "home")},
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert _last_line(done.stderr) == FULL
    assert "completed" not in done.stdout


def test_a_full_disk_at_a_rounds_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's error for a full disk, raised where a round commits (the second round's)."""
    commits: list[int] = []
    real = rounds_run.store_phase

    def store_phase(*args: object, **kwargs: object) -> object:
        commits.append(1)
        if len(commits) == 2:
            raise OperationalError(
                "INSERT INTO fill", {}, sqlite3.OperationalError("database or disk is full")
            )
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rounds_run, "store_phase", store_phase)
    config = tmp_path / "c.toml"
    config.write_text(
        f'name = "c"\ndataset = "{tiny_dataset(tmp_path / "data")}"\nstart = 2025-01-01T00:00:00Z\n'
        '[schedule]\nevery = "7d"\nrounds = 2\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
        '[[agents]]\nname = "random"\nkind = "random"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["replay", str(config), "--database-url", f"sqlite:///{tmp_path / 'a.db'}"]
    )

    assert result.exit_code == 1, result.output
    assert _last_line(result.stderr) == FULL and "completed" not in result.stdout


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_report_on_a_full_disk_is_one_line_and_leaves_nothing(
    small_disk: Callable[[str], Path], engine: Engine
) -> None:
    build_world(engine)
    disk = small_disk("1m")  # report.html alone embeds plotly.js (several MB)
    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(app, ["report", REPLAY, "--out", str(disk / "r"), "--database-url", url])

    assert result.exit_code == 1, result.output
    line = _last_line(result.stderr)
    assert (
        line.startswith(f"error: writing the report to {disk / 'r'}: ") and "No space left on device" in line
    )
    assert os.listdir(disk) == []  # no folder, no zip, no partial copy
