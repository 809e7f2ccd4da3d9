"""``arena worker`` and ``arena replay --queue`` on SQLite: one line saying PostgreSQL is needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from tests.engine.helpers import tiny_dataset
from tests.workers import ON_POSTGRES
from tests.workers.study import study_config


def test_worker_refuses_sqlite_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["worker", "--database-url", f"sqlite:///{tmp_path / 'a.db'}"])
    assert result.exit_code == 2
    assert "need PostgreSQL" in result.output and "Traceback" not in result.output


def test_queue_refuses_sqlite_before_launching_anything(tmp_path: Path) -> None:
    path = study_config(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), name="study")
    url = f"sqlite:///{tmp_path / 'a.db'}"
    result = CliRunner().invoke(app, ["replay", "--queue", str(path), "--database-url", url])
    assert result.exit_code == 2 and "need PostgreSQL" in result.output
    assert not (tmp_path / "a.db").exists()  # nothing launched: not even an empty database left


def test_several_configs_need_queue(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["replay", "a.toml", "b.toml", "--database-url", f"sqlite:///{tmp_path / 'a.db'}"]
    )
    assert result.exit_code == 2 and "only with --queue" in result.output


@ON_POSTGRES
def test_queue_names_an_unknown_cohort(db_url: str) -> None:
    result = CliRunner().invoke(app, ["replay", "--queue", "--cohort", "nope", "--database-url", db_url])
    assert result.exit_code == 2 and "no cohort with id 'nope'" in result.output


@ON_POSTGRES
@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (
            '[[agents]]\nname = "x"\nkind = "llm"\nmodel = "m"\napi_key_env = "ARENA_TEST_NO_SUCH_KEY"\n',
            "api_key_env: environment variable 'ARENA_TEST_NO_SUCH_KEY' is not set",
        ),
        ('[[agents]]\nname = "x"\nkind = "kely"\n', "agents[0] (x): unknown agent kind 'kely'"),
        ('dataset = "no/such/folder"\n[[agents]]\nname = "x"\nkind = "hold"\n', "dataset: "),
    ],
)
def test_queue_checks_every_config_completely_before_launching_any(
    db_url: str, tmp_path: Path, broken: str, message: str
) -> None:
    """A bad second config is one line naming it and the problem, exit 2, and nothing launched:
    the first cohort is not left pending."""
    good = study_config(tmp_path / "a.toml", tiny_dataset(tmp_path / "data"), name="good")
    bad = tmp_path / "b.toml"
    bad.write_text('name = "bad"\nstart = 2025-01-01T00:00:00Z\n' + broken, encoding="utf-8")
    result = CliRunner().invoke(app, ["replay", "--queue", str(good), str(bad), "--database-url", db_url])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {bad}") and message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    listed = CliRunner().invoke(app, ["cohort", "list", "--database-url", db_url])
    assert "No cohorts yet" in listed.output
