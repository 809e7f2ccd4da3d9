"""A SQLite file deleted under a running ``arena replay`` is an error, never a completed run.

A real ``arena`` process replays a slow bot; once the bot has been asked, the test deletes the
database and its ``-wal``/``-shm`` files. The process must end with one line saying so and a
non-zero exit, and never print "completed" or a leaderboard.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from arena.db.engine import DatabaseGone, database_gone, make_engine, session_scope
from tests.engine.helpers import tiny_dataset

REPO = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, signal: Path) -> Path:
    config = tmp_path / "slow.toml"
    config.write_text(
        f'name = "slow"\ndataset = "{tiny_dataset(tmp_path / "data")}"\nstart = 2025-01-01T00:00:00Z\n'
        '[schedule]\nevery = "1d"\nrounds = 15\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
        '[[agents]]\nname = "hold"\nkind = "hold"\n'
        '[[agents]]\nname = "slow"\nkind = "plugin"\npath = "tests.engine.slow_bot:SlowBettor"\n'
        f'settings = {{ signal = "{signal}" }}\n',
        encoding="utf-8",
    )
    return config


@pytest.mark.slow
def test_deleting_the_database_mid_replay_fails_the_run(tmp_path: Path) -> None:
    database, signal = tmp_path / "arena.db", tmp_path / "asked"
    command = [sys.executable, "-m", "arena.cli", "replay", str(_config(tmp_path, signal))]
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    process = subprocess.Popen(
        [*command, "--database-url", f"sqlite:///{database}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    deadline = time.monotonic() + 60
    while not signal.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert signal.exists(), process.communicate()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    stdout, stderr = process.communicate(timeout=120)

    assert process.returncode == 1, stdout + stderr
    assert "completed" not in stdout and "Leaderboard" not in stdout, stdout
    last = stderr.strip().splitlines()[-1]
    assert (
        last
        == f"error: the database file {database} was deleted while this command ran; nothing more was saved"
    )


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_write_to_a_vanished_file_is_refused(db_url: str) -> None:
    engine = make_engine(db_url)
    with session_scope(engine) as session:
        session.execute(text("CREATE TABLE t (x INTEGER)"))
    assert database_gone(engine) is None
    path = Path(str(engine.url.database))
    path.rename(path.with_name("moved.db"))
    path.write_bytes(b"")  # another file at the same path: not the database this engine opened

    assert database_gone(engine) == (
        f"the database file {path} was replaced while this command ran; nothing more was saved"
    )
    with pytest.raises(DatabaseGone, match="was replaced"), session_scope(engine) as session:
        session.execute(text("INSERT INTO t VALUES (1)"))
    with session_scope(engine, write=False) as session:  # reading what it still holds is harmless
        assert session.execute(text("SELECT count(*) FROM t")).scalar_one() == 0
    engine.dispose()
