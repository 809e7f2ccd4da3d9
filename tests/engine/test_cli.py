"""The engine's commands, run through the real ``arena`` CLI on a SQLite file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts.config import load_config
from arena.commands.demo import agent_name_for
from arena.corpus.market_texts import BUNDLED_CORPUS
from arena.corpus.store import list_corpora
from arena.db.engine import make_engine
from arena.db.models import CohortRow, RoundRow
from markets.replay import ReplayDataset
from markets.replay import source as replay_source
from tests.engine.helpers import A, day, frozen_parses, script, tiny_dataset
from tests.fakes.openai_server import FakeOpenAIServer, Reply

runner = CliRunner()
RESEARCHER_CONFIG = Path(__file__).resolve().parents[2] / "data" / "configs" / "researcher.toml"


def _toml(path: Path, dataset: Path, agents: str, extra: str = "") -> Path:
    path.write_text(
        f'name = "cli test"\ndataset = "{dataset}"\nstart = 2025-01-01T00:00:00Z\n{extra}\n'
        '[schedule]\nevery = "7d"\nrounds = 2\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n' + agents,
        encoding="utf-8",
    )
    tomllib.loads(path.read_text())  # the test's own TOML must be valid
    return path


def _arena(*args: str, db: Path) -> tuple[int, str]:
    """Exit code and output with whitespace collapsed (rich wraps lines at the terminal width)."""
    result = runner.invoke(app, [*args, "--database-url", f"sqlite:///{db}"], catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def _cohorts(db: Path) -> list[CohortRow]:
    with Session(make_engine(f"sqlite:///{db}")) as session:
        return list(session.exec(select(CohortRow)).all())


def test_replay_parses_the_cohorts_frozen_config_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = '[[agents]]\nname = "hold"\nkind = "hold"\n'
    parses = frozen_parses(monkeypatch)
    code, out = _arena(
        "replay",
        str(_toml(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), agents)),
        db=tmp_path / "a.db",
    )
    assert code == 0, out
    assert len(parses) == 1  # the runtime's; the mode check, the run and the leaderboard reuse it


def test_replay_of_a_config_reads_its_dataset_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cohort launches and replays from the same loaded dataset (it was read twice)."""
    loads: list[Path | str] = []
    real = replay_source.load_dataset

    def counted(path: Path | str) -> ReplayDataset:
        loads.append(path)
        return real(path)

    monkeypatch.setattr(replay_source, "load_dataset", counted)
    agents = '[[agents]]\nname = "hold"\nkind = "hold"\n'
    code, out = _arena(
        "replay",
        str(_toml(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), agents)),
        db=tmp_path / "a.db",
    )
    assert code == 0, out
    assert len(loads) == 1


def test_replay_a_config_to_the_end_and_print_the_leaderboard(tmp_path: Path) -> None:
    lines = [{"time": day(0).isoformat(), "market_id": A, "outcome": "YES", "amount": 500}]
    agents = (
        f'[[agents]]\nname = "alice"\nkind = "scripted"\npath = "{script(tmp_path / "a.jsonl", lines)}"\n'
    )
    agents += '[[agents]]\nname = "hold"\nkind = "hold"\n'
    code, out = _arena(
        "replay",
        str(_toml(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), agents)),
        db=tmp_path / "a.db",
    )
    assert code == 0, out
    assert "completed: every round run and every position settled" in out and "Leaderboard" in out
    (cohort,) = _cohorts(tmp_path / "a.db")
    assert cohort.status == "completed"
    # The same config again is a new cohort (a re-run never mixes with the first).
    assert _arena("replay", str(tmp_path / "c.toml"), db=tmp_path / "a.db")[0] == 0
    assert len(_cohorts(tmp_path / "a.db")) == 2


def test_a_round_where_every_agent_fails_exits_non_zero(tmp_path: Path) -> None:
    agents = '[[agents]]\nname = "broke"\nkind = "plugin"\npath = "tests.engine.bots:FailingBettor"\n'
    code, out = _arena(
        "replay",
        str(_toml(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), agents)),
        db=tmp_path / "a.db",
    )
    assert code == 1
    assert "error: every agent failed in round(s) 0, 1" in out


def test_bad_config_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    agents = '[[agents]]\nname = "h"\nkind = "hold"\n'
    config = _toml(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), agents, extra='fill_model = "mid"')
    code, out = _arena("cohort", "launch", str(config), db=tmp_path / "a.db")
    assert code == 2
    assert (
        out
        == f"error: {config}: fill_model: unknown key (check the spelling; see docs/cohorts.md for the keys)"
    )
    assert not (tmp_path / "a.db").exists()  # the database the launch created is removed again


def test_launch_list_show_pause_resume_cancel(tmp_path: Path) -> None:
    agents = '[[agents]]\nname = "fav"\nkind = "favorite"\n'
    config = _toml(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), agents)
    db = tmp_path / "a.db"
    code, out = _arena("cohort", "launch", str(config), "--id", "c1", db=db)
    assert code == 0 and "Launched cohort c1" in out and "arena replay --cohort c1" in out
    assert _arena("cohort", "launch", str(config), "--id", "c1", db=db)[1].startswith(
        "Already launched: cohort c1"
    )
    assert "pending" in _arena("cohort", "list", db=db)[1]
    assert _arena("cohort", "pause", "c1", db=db) == (0, "cohort c1 is now paused")
    code, out = _arena("replay", "--cohort", "c1", db=db)
    assert code == 0 and "Stopped: cohort c1 is paused." in out
    assert _arena("cohort", "resume", "c1", db=db)[0] == 0
    code, out = _arena("replay", "--cohort", "c1", db=db)
    assert code == 0 and "completed" in out
    code, out = _arena("cohort", "show", "c1", db=db)
    assert code == 0 and "fav" in out and "completed" in out
    assert _arena("cohort", "reconcile", "c1", db=db) == (
        0,
        "cohort c1: 1 ledgers agree with their fill logs to the micro-dollar",
    )
    code, out = _arena("cohort", "cancel", "c1", db=db)
    assert code == 2 and "cohort c1 is completed; cancel needs one of: pending, running, paused" in out


def test_markets_pending_and_a_bad_override(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    code, out = _arena("markets", "pending", db=db)  # a reading command creates no database
    assert code == 2 and "No arena database at" in out and not db.exists()
    assert _arena("db", "upgrade", db=db)[0] == 0
    code, out = _arena("markets", "pending", db=db)
    assert code == 0 and "No pending markets" in out
    code, out = _arena("markets", "resolve", "polymarket:x", "--outcome", "MAYBE", db=db)
    assert code == 2 and "unknown market 'polymarket:x'" in out  # outcomes are the market's own


@pytest.mark.slow
@pytest.mark.usefixtures("offline_demo")
def test_demo_runs_offline_on_the_bundled_dataset_with_a_local_llm(tmp_path: Path) -> None:
    hold = json.dumps({"reasoning": "No edge.", "actions": [], "probabilities": {}})
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok(hold)
        code, out = _arena(
            "demo", "--llm-base-url", server.base_url, "--model", "acme/local-7b", db=tmp_path / "demo.db"
        )
        calls = len(server.requests)
    assert code == 0, out
    assert "local-7b" in out  # the agent is named after its model
    assert "completed" in out and "Leaderboard" in out and "arena dashboard" in out
    (cohort,) = _cohorts(tmp_path / "demo.db")
    assert cohort.status == "completed" and cohort.name == "demo-baselines"
    with Session(make_engine(f"sqlite:///{tmp_path / 'demo.db'}")) as session:
        rounds = session.exec(select(RoundRow)).all()
    assert len(rounds) > 40 and calls == len(rounds)  # one LLM call a round, every round
    assert len(list((tmp_path / "home" / "reports").glob("*/report.html"))) == 1
    # The bundled market texts are imported for search_news, once: a second demo keeps them.
    assert "Corpus forecastbench-markets: 487 market texts (imported)" in out
    code, out = _arena("demo", "--no-report", db=tmp_path / "demo.db")
    assert code == 0 and "Corpus forecastbench-markets: 487 market texts (already imported)" in out
    with make_engine(f"sqlite:///{tmp_path / 'demo.db'}").connect() as connection:
        assert [c.name for c in list_corpora(connection)] == [BUNDLED_CORPUS]
    assert load_config(RESEARCHER_CONFIG).tools.corpus == BUNDLED_CORPUS  # what the demo imports


def test_resuming_without_the_llm_key_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = '[[agents]]\nname = "llm"\nkind = "llm"\nmodel = "openai/gpt-4o-mini"\n'
    agents += 'api_key_env = "ARENA_TEST_KEY"\n'
    config = _toml(tmp_path / "c.toml", tiny_dataset(tmp_path / "data"), agents)
    monkeypatch.setenv("ARENA_TEST_KEY", "sk-abc-not-real")
    assert _arena("cohort", "launch", str(config), "--id", "c1", db=tmp_path / "a.db")[0] == 0
    monkeypatch.delenv("ARENA_TEST_KEY")
    code, out = _arena("replay", "--cohort", "c1", db=tmp_path / "a.db")
    assert code == 2 and "environment variable 'ARENA_TEST_KEY' is not set" in out and "sk-abc" not in out


def _replay_with_a_deaf_llm(tmp_path: Path, *args: str, db: str = "a.db") -> tuple[int, str]:
    """Replay ``hold`` beside an LLM whose every answer is unusable (2 rounds: 0 of 2 valid)."""
    agents = '[[agents]]\nname = "hold"\nkind = "hold"\n'
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok("I would rather not answer in JSON.")
        agents += (
            f'[[agents]]\nname = "deaf"\nkind = "llm"\nmodel = "local"\nbase_url = "{server.base_url}"\n'
        )
        data = tmp_path / "data"
        config = _toml(tmp_path / "c.toml", data if data.exists() else tiny_dataset(data), agents)
        return _arena("replay", str(config), *args, db=tmp_path / db)


def test_an_agent_that_never_answered_validly_fails_the_run_loudly(tmp_path: Path) -> None:
    code, out = _replay_with_a_deaf_llm(tmp_path)
    assert code == 3, out  # documented: an agent failed over the cohort
    assert "warning: agent deaf failed: 0 of 2 answers valid (below 50%)" in out
    assert "most common error: invalid_output ×2" in out and "warning: agent hold" not in out
    allowed = _replay_with_a_deaf_llm(tmp_path, "--allow-agent-failures", db="b.db")
    assert allowed[0] == 0 and "warning: agent deaf failed" in allowed[1]


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("llama3.1:8b", "llama3.1-8b"),
        ("Qwen/Qwen2.5 7B", "Qwen2.5-7B"),
        ("///", "llm"),
    ],
)
def test_a_demo_llm_is_named_after_its_model(model: str, name: str) -> None:
    assert agent_name_for(model) == name


def test_a_failed_agent_is_not_ranked_on_the_leaderboard(tmp_path: Path) -> None:
    assert _replay_with_a_deaf_llm(tmp_path, "--allow-agent-failures")[0] == 0
    result = runner.invoke(app, ["leaderboard", "--json", "--database-url", f"sqlite:///{tmp_path / 'a.db'}"])
    rows = {a["agent"]: a for a in json.loads(result.output)["agents"]}
    # deaf ties hold on every money figure, but it failed: no rank, listed after the working agents.
    assert (rows["deaf"]["failed"], rows["deaf"]["rank"]) == (True, None)
    assert (rows["hold"]["failed"], rows["hold"]["rank"]) == (False, 1)
    assert [a["agent"] for a in json.loads(result.output)["agents"]] == ["hold", "deaf"]
    table = runner.invoke(
        app, ["leaderboard", "--database-url", f"sqlite:///{tmp_path / 'a.db'}"], env={"COLUMNS": "200"}
    )
    assert "FAILED" in table.output
