"""Reproducing a cohort: `arena cohort export ID` then `arena replay` of that TOML, and
`arena replay --from-report DIR`, give the same fills and the same leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner, Result

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import AgentRow, FillRow
from tests.engine.helpers import D0, tiny_dataset

AGENTS = """
[[agents]]
name = "mock"
kind = "llm"
provider = "mock"
model = "seeded"
seed = 3
mock = { markets = 2, bet_fraction = 0.3 }

[[agents]]
name = "random"
kind = "random"

[[agents]]
name = "kelly"
kind = "kelly"
"""


def arena(*args: str, db: str) -> Result:
    return CliRunner().invoke(app, [*args, "--database-url", db], env={"COLUMNS": "200"})


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "original.toml"
    path.write_text(
        f'name = "repro"\ndataset = "{tiny_dataset(tmp_path / "data")}"\nstart = {D0:%Y-%m-%dT%H:%M:%SZ}\n'
        f'seed = 11\n[schedule]\nevery = "7d"\nrounds = 2\n[universe]\nmin_price = "0.01"\n'
        f'max_price = "0.99"\n{extra}{AGENTS}',
        encoding="utf-8",
    )
    return path


def _replayed(db: str, *args: str) -> str:
    """Replay (``args`` as for `arena replay`) and return the new cohort's id."""
    before = _ids(db)
    result = arena("replay", *args, db=db)
    assert result.exit_code == 0, result.output
    (new,) = _ids(db) - before
    return new


def _ids(db: str) -> set[str]:
    """The cohorts in ``db``; none when it does not exist yet (listing never creates it)."""
    listed = arena("cohort", "list", "--json", db=db)
    if listed.exit_code and ("No arena database" in listed.output or "holds no arena data" in listed.output):
        return set()
    assert listed.exit_code == 0, listed.output
    return {c["id"] for c in json.loads(listed.stdout)}


def _fills(db: str, cohort_id: str) -> list[tuple[Any, ...]]:
    engine = make_engine(db)
    query = (
        select(AgentRow.name, FillRow.market_id, FillRow.outcome, FillRow.kind, FillRow.amount, FillRow.price)
        .join(AgentRow, AgentRow.id == FillRow.agent_id)
        .where(AgentRow.cohort_id == cohort_id)
        .order_by(AgentRow.name, FillRow.filled_at, FillRow.market_id, FillRow.kind)
    )
    with engine.connect() as connection:
        rows = [tuple(r) for r in connection.execute(query)]
    engine.dispose()
    return rows


def _board(db: str, cohort_id: str) -> dict[str, Any]:
    result = arena("leaderboard", "--json", "--cohort", cohort_id, db=db)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document.pop("cohorts") == [cohort_id]
    for row in document["agents"]:
        row.pop("mean_latency_s")  # the wall time the answers took: the one thing a rerun may change
    return dict(document)


def test_an_exported_config_relaunches_the_same_cohort(db_url: str, tmp_path: Path) -> None:
    original = _replayed(db_url, str(_config(tmp_path)))
    exported = arena("cohort", "export", original, db=db_url)
    assert exported.exit_code == 0 and exported.stderr == ""
    shown = json.loads(arena("cohort", "show", original, "--json", db=db_url).stdout)
    assert f"# config sha256 {shown['config_hash']}" in exported.stdout
    toml = tmp_path / "cohort.toml"
    toml.write_text(exported.stdout, encoding="utf-8")
    again = _replayed(db_url, str(toml))
    assert (
        json.loads(arena("cohort", "show", again, "--json", db=db_url).stdout)["config_hash"]
        == (shown["config_hash"])
    )
    fills = _fills(db_url, original)
    assert {name for name, *_ in fills} >= {"mock", "random"}  # something to compare
    assert _fills(db_url, again) == fills
    assert _board(db_url, again) == _board(db_url, original)


def test_a_report_folder_relaunches_its_cohort_once_its_dataset_is_checked(
    db_url: str, tmp_path: Path
) -> None:
    original = _replayed(db_url, str(_config(tmp_path)))
    folder = tmp_path / "report"
    assert arena("report", original, "--out", str(folder), "--no-zip", db=db_url).exit_code == 0
    assert (folder / "config.toml").is_file()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"]["config.toml"].startswith("sha256:")
    again = _replayed(db_url, "--from-report", str(folder))
    assert _fills(db_url, again) == _fills(db_url, original)
    assert _board(db_url, again) == _board(db_url, original)

    manifest["dataset"]["content_hash"] = "sha256:" + "0" * 64
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    cohorts = len(json.loads(arena("cohort", "list", "--json", db=db_url).stdout))
    refused = arena("replay", "--from-report", str(folder), db=db_url)
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert f"but the report replayed sha256:{'0' * 64}: put the report's data at that path" in refused.stderr
    assert len(json.loads(arena("cohort", "list", "--json", db=db_url).stdout)) == cohorts  # none launched


def test_a_config_edited_since_the_report_is_refused(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    original = _replayed(db, str(_config(tmp_path)))
    folder = tmp_path / "report"
    assert arena("report", original, "--out", str(folder), "--no-zip", db=db).exit_code == 0
    config = folder / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("seed = 11", "seed = 12"), encoding="utf-8")
    refused = arena("replay", "--from-report", str(folder), db=db)
    assert refused.exit_code == 2 and "would not relaunch the same cohort" in refused.stderr
    missing = arena("replay", "--from-report", str(tmp_path / "nothing"), db=db)
    assert missing.exit_code == 2 and "not a report folder (no manifest.json)" in missing.stderr


def test_an_export_never_writes_a_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key pasted where a config should hold none (a header value) is written as [REDACTED],
    with a warning that the file then relaunches a different config."""
    db = f"sqlite:///{tmp_path / 'a.db'}"
    monkeypatch.setenv("ARENA_TEST_KEY", "not-a-real-key-0123456789")
    leaky = '[[agents]]\nname = "llm"\nkind = "llm"\nmodel = "m"\napi_key_env = "ARENA_TEST_KEY"\n'
    leaky += 'extra_headers = { "X-Title" = "not-a-real-key-0123456789" }\n'
    path = _config(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + leaky, encoding="utf-8")
    assert arena("cohort", "launch", str(path), "--id", "c1", db=db).exit_code == 0
    exported = arena("cohort", "export", "c1", db=db)
    assert exported.exit_code == 0
    assert "not-a-real-key" not in exported.stdout and 'X-Title = "[REDACTED]"' in exported.stdout
    assert 'api_key_env = "ARENA_TEST_KEY"' in exported.stdout  # a name, not a secret: kept
    assert "warning: values that look like secrets are written as [REDACTED]" in exported.stderr
