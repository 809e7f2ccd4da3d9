"""Settings: the SQLite default under ARENA_HOME, overrides from the environment, no leaked secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from arena.core.settings import Settings
from arena.db.engine import make_engine


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    monkeypatch.delenv("ARENA_HOME", raising=False)


def test_default_is_a_sqlite_file_under_dot_arena_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert settings.db_url == f"sqlite:///{tmp_path.resolve() / '.arena' / 'arena.db'}"
    monkeypatch.chdir("/")  # the path was pinned when settings were read
    engine = make_engine(settings.db_url)
    with engine.connect():
        pass
    engine.dispose()
    assert (tmp_path / ".arena" / "arena.db").exists()


def test_arena_home_moves_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "state"))
    assert Settings().db_url == f"sqlite:///{tmp_path / 'state' / 'arena.db'}"


def test_database_url_from_the_environment_is_masked_in_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", "postgresql://arena:hunter2@db/arena")
    settings = Settings()
    assert settings.db_url == "postgresql://arena:hunter2@db/arena"
    for shown in (repr(settings), str(settings.model_dump()), settings.model_dump_json()):
        assert "hunter2" not in shown


def test_empty_database_url_is_an_error_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", " ")
    with pytest.raises(ValidationError, match="ARENA_DATABASE_URL is empty"):
        Settings()


@pytest.mark.parametrize(("value", "durable"), [(None, True), ("off", False), ("on", True)])
def test_replay_commits_are_durable_unless_turned_off(
    value: str | None, durable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_REPLAY_SYNCHRONOUS_COMMIT", raising=False)
    if value is not None:
        monkeypatch.setenv("ARENA_REPLAY_SYNCHRONOUS_COMMIT", value)
    assert Settings().replay_synchronous_commit is durable
