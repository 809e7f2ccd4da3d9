"""The researcher's CLI: nothing cut at 80 columns, ``--json`` listings, errors listed and counted
the same everywhere, consistent exit codes (a SQLite or PostgreSQL database, as a user runs it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from arena.cli import app
from markets.replay.load import BUNDLED_DATASET_DIR
from tests.engine.helpers import D0, A, B, script, tiny_dataset

LONG_NAME = "a-cohort-name-long-enough-to-need-the-whole-width-of-a-terminal"
LONG_AGENT = "an-agent-whose-name-is-long-enough-to-wrap-twice"


def arena(*args: str, db: str | None, columns: int = 80) -> Result:
    """The CLI as piped into another program, at ``columns`` wide (on database ``db``, if any)."""
    database = [] if db is None else ["--database-url", db]
    return CliRunner().invoke(app, [*args, *database], env={"COLUMNS": str(columns)})


def _config(tmp_path: Path, agents: str, *, name: str = "cli", rounds: int = 2) -> Path:
    data = tmp_path / "data"
    dataset = data if data.exists() else tiny_dataset(data)
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ndataset = "{dataset}"\nstart = {D0:%Y-%m-%dT%H:%M:%SZ}\n'
        f'[schedule]\nevery = "7d"\nrounds = {rounds}\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
        + agents,
        encoding="utf-8",
    )
    return path


def _rejected_round(tmp_path: Path) -> Path:
    """A scripted agent whose first round holds one bet below the $50 minimum, and two stated
    probabilities; a replay of it beside ``hold``."""
    lines = [
        {
            "time": f"{D0:%Y-%m-%dT%H:%M:%SZ}",
            "market_id": A,
            "outcome": "YES",
            "amount": 30,
            "probability": 0.55,
        },
        {
            "time": f"{D0:%Y-%m-%dT%H:%M:%SZ}",
            "market_id": B,
            "outcome": "NO",
            "amount": 100,
            "probability": 0.7,
        },
    ]
    path = script(tmp_path / "decisions.jsonl", lines)
    agents = (
        f'[[agents]]\nname = "{LONG_AGENT}"\nkind = "scripted"\npath = "{path}"\n'
        '[[agents]]\nname = "hold"\nkind = "hold"\n'
    )
    return _config(tmp_path, agents, name=LONG_NAME)


def test_a_rejected_round_is_an_error_everywhere_with_its_message_and_its_forecasts_count(
    db_url: str, tmp_path: Path
) -> None:
    replayed = arena("replay", str(_rejected_round(tmp_path)), db=db_url)
    assert replayed.exit_code == 0, replayed.output
    out = " ".join(replayed.output.split())
    assert "agent errors 1" in out  # the progress bar
    (cohort,) = json.loads(arena("cohort", "list", "--json", db=db_url).stdout)
    cohort_id = cohort["id"]
    assert f"1 agent error (decisions that failed or were refused): `arena cohort errors {cohort_id}`" in out
    shown = json.loads(arena("cohort", "show", cohort_id, "--json", db=db_url).stdout)
    agents = {a["name"]: a for a in shown["agents"]}
    assert (agents[LONG_AGENT]["errors"], agents["hold"]["errors"], shown["errors"]) == (1, 0, 1)
    text = arena("cohort", "show", cohort_id, db=db_url).stdout
    assert f"1 error: `arena cohort errors {cohort_id}` lists each with its message" in " ".join(text.split())
    (error,) = json.loads(arena("cohort", "errors", cohort_id, "--json", db=db_url).stdout)
    assert (error["round"], error["agent"], error["status"], error["error_kind"]) == (
        0,
        LONG_AGENT,
        "rejected",
        "invalid_actions",
    )
    assert error["markets"] == [A, B]
    assert (
        "leg 1 (bet $30.00 on 'YES' of 'polymarket:a'): amount $30.00 is below the minimum bet"
        in (error["message"])
    )
    listed = arena("cohort", "errors", cohort_id, db=db_url)
    assert listed.exit_code == 0 and "below the minimum bet $50.00" in " ".join(listed.stdout.split())
    assert f"round 0  2025-01-01 00:00  {LONG_AGENT}  rejected (invalid_actions)" in listed.stdout
    assert (
        arena("cohort", "errors", cohort_id, "--agent", "hold", db=db_url)
        .stdout.strip()
        .endswith("no agent errors")
    )
    # The bet broke a rule, not the forecasts: both stated probabilities are scored (the NO 0.7 as
    # YES 0.3). Before, a refused leg threw the round's forecasts away as well.
    board = json.loads(arena("leaderboard", "--json", db=db_url).stdout)
    scripted = next(a for a in board["agents"] if a["agent"] == LONG_AGENT)
    assert scripted["stated_brier"] == pytest.approx(((1 - 0.55) ** 2 + 0.3**2) / 2)
    assert scripted["bets"] == 0  # and no leg was executed: all or none, as documented


def _no_cut(output: str, *texts: str) -> None:
    """Each text appears whole on one line, and rich cut nothing to an ellipsis."""
    for text in texts:
        assert any(text in line for line in output.splitlines()), (text, output)
    assert "…" not in output.replace("2024-07-28 … 2026-08-18", "").replace(" … ", ""), output


def test_the_listings_fit_80_columns_without_cutting_an_id_a_name_or_a_hash(
    db_url: str, tmp_path: Path
) -> None:
    assert arena("replay", str(_rejected_round(tmp_path)), db=db_url).exit_code == 0
    listed = arena("cohort", "list", db=db_url)
    (cohort,) = json.loads(arena("cohort", "list", "--json", db=db_url).stdout)
    _no_cut(listed.stdout, cohort["id"], LONG_NAME)
    assert max(len(line) for line in listed.stdout.splitlines()) <= 80
    shown = arena("cohort", "show", cohort["id"], db=db_url)
    config_hash = json.loads(arena("cohort", "show", cohort["id"], "--json", db=db_url).stdout)["config_hash"]
    _no_cut(shown.stdout, cohort["id"], config_hash, "0.00", "10,000.00")
    first, second = LONG_AGENT[:24], LONG_AGENT[24:]  # folded onto two lines of its cell, never cut
    assert re.search(rf"^{first}\s.*\n{second}\s", shown.stdout, re.MULTILINE), shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    assert "-0.00" not in shown.stdout
    status = arena("status", db=db_url)
    assert max(len(line) for line in status.stdout.splitlines()) <= 80 and "…" not in status.stdout
    info = arena("data", "info", str(BUNDLED_DATASET_DIR), db=None)
    dataset = json.loads(arena("data", "info", str(BUNDLED_DATASET_DIR), "--json", db=None).stdout)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", dataset["content_hash"])
    _no_cut(info.stdout, dataset["content_hash"])
    assert max(len(line) for line in info.stdout.splitlines()) <= 80


def test_every_listing_command_has_json_with_its_documented_keys(db_url: str, tmp_path: Path) -> None:
    assert arena("replay", str(_rejected_round(tmp_path)), db=db_url).exit_code == 0
    (cohort,) = json.loads(arena("cohort", "list", "--json", db=db_url).stdout)
    assert set(cohort) == {
        "id", "name", "mode", "status", "agents", "rounds_done", "rounds_planned", "created_at", "queue"
    }  # fmt: skip
    assert (cohort["name"], cohort["agents"], cohort["rounds_done"], cohort["rounds_planned"]) == (
        LONG_NAME,
        2,
        2,
        2,
    )
    shown = json.loads(arena("cohort", "show", cohort["id"], "--json", db=db_url).stdout)
    assert {"id", "config_hash", "agents", "errors", "stale_positions", "rounds_done"} <= set(shown)
    assert set(shown["agents"][0]) == {
        "name", "kind", "model", "mock", "value", "pnl", "return_pct", "cash", "open_positions", "bets",
        "errors", "missed", "cost",
    }  # fmt: skip
    status = json.loads(arena("status", "--json", db=db_url).stdout)
    assert set(status) >= {"healthy", "problems", "scheduler", "jobs", "workers", "units"}
    assert status["scheduler"]["leader"] is None and {j["name"] for j in status["jobs"]} >= {
        "sync",
        "rounds",
    }
    assert json.loads(arena("markets", "pending", "--json", db=db_url).stdout) == []
    info = json.loads(arena("data", "info", str(BUNDLED_DATASET_DIR), "--json", db=None).stdout)
    assert (info["name"], sum(v["markets"] for v in info["venues"])) == ("forecastbench", 487)
    corpus = tmp_path / "news.jsonl"
    corpus.write_text(
        json.dumps({"id": "n1", "published_at": "2025-01-02T00:00:00Z", "title": "t", "text": "x"}) + "\n",
        encoding="utf-8",
    )
    assert arena("corpus", "import", str(corpus), "--name", "news", db=db_url).exit_code == 0
    about = json.loads(arena("corpus", "info", "news", "--json", db=db_url).stdout)
    assert (about["name"], about["documents"], about["first_published"]) == (
        "news",
        1,
        "2025-01-02T00:00:00+00:00",
    )


@pytest.mark.parametrize(
    "command",
    [
        ["cohort", "show", "nope"],
        ["cohort", "errors", "nope"],
        ["cohort", "export", "nope"],
        ["cohort", "pause", "nope"],
        ["replay", "--cohort", "nope"],
        ["leaderboard", "--cohort", "nope"],
        ["report", "nope", "--out", "r"],
    ],
)
def test_an_unknown_cohort_is_the_same_one_line_error_and_exit_code_everywhere(
    command: list[str], tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    assert arena("db", "upgrade", db=db).exit_code == 0  # the database exists, empty
    result = arena(*command, db=db)
    assert result.exit_code == 2, result.output
    assert result.stderr == "error: no cohort with id 'nope' (see `arena cohort list`)\n"


def test_one_agent_is_one_agent_and_the_leakage_warning_is_printed_once(tmp_path: Path) -> None:
    agents = '[[agents]]\nname = "blind"\nkind = "llm"\nprovider = "mock"\nmodel = "m"\n'
    mock = arena("replay", str(_config(tmp_path, agents)), db=f"sqlite:///{tmp_path / 'a.db'}")
    assert mock.exit_code == 0, mock.output
    assert "(replay, 1 agent)" in mock.output and "leakage guard" not in mock.output  # a mock: no guard
    agents = '[[agents]]\nname = "blind"\nkind = "llm"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
    launched = arena(
        "cohort", "launch", str(_config(tmp_path, agents, name="b")), db=f"sqlite:///{tmp_path / 'b.db'}"
    )
    assert launched.exit_code == 0, launched.output
    assert launched.output.count("leakage guard: off for blind") == 1


def test_a_live_launch_says_when_its_first_round_runs(tmp_path: Path) -> None:
    config = tmp_path / "live.toml"
    config.write_text(
        'name = "live"\nmode = "live"\nvenue = "polymarket"\n[schedule]\nevery = "1d"\nrounds = 3\n'
        '[[agents]]\nname = "hold"\nkind = "hold"\n',
        encoding="utf-8",
    )
    result = arena("cohort", "launch", str(config), db=f"sqlite:///{tmp_path / 'a.db'}")
    assert result.exit_code == 0, result.output
    found = re.search(
        r"first round at (\d{4}-\d\d-\d\d) 00:00 UTC \(in (\d+ h )?\d+ min\), then every 1d", result.output
    )
    assert found is not None, result.output
    assert "3 rounds in all, run by `arena serve`" in " ".join(result.output.split())


def test_a_fixed_round_replay_ends_its_progress_bar_full(tmp_path: Path) -> None:
    result = arena(
        "replay",
        str(_config(tmp_path, '[[agents]]\nname = "hold"\nkind = "hold"\n')),
        db=f"sqlite:///{tmp_path / 'a.db'}",
        columns=120,
    )
    assert result.exit_code == 0, result.output
    done, total = map(int, re.findall(r"(\d+)/(\d+) \d+:\d\d:\d\d", result.output)[-1])
    assert done == total > 0
