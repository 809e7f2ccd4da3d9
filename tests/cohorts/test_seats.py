"""``replicates = N``: N independent copies of an agent, seated as name#1..N, each LLM copy with a
sampling seed of its own; launched, run, exported and shown on the leaderboard (both backends)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts.config import ConfigError, parse_config
from arena.cohorts.export import config_toml
from arena.cohorts.seats import replicated_agent, seats
from arena.db.models import AgentRow
from arena.engine.runtime.budgets import agent_caps
from tests.engine.helpers import config, launch_cohort, tiny_dataset

MOCK = {"kind": "llm", "provider": "mock", "model": "seeded", "mock": {"noise": 0.2}}


def test_replicates_seat_numbered_copies_with_their_own_seeds() -> None:
    parsed = parse_config(
        {
            "name": "x",
            "seed": 5,
            "agents": [
                {"name": "m", **MOCK, "replicates": 3},
                {"name": "s", **MOCK, "seed": 40, "replicates": 2, "budget": {"max_cost_usd": "1"}},
                {"name": "r", "kind": "random", "replicates": 2},
                {"name": "h", "kind": "hold"},
            ],
        }
    )
    found = [(s.name, s.agent, s.replicate, s.settings.get("seed")) for s in seats(parsed)]
    assert found == [
        ("m#1", "m", 1, 5),  # the cohort's seed, then one more per copy
        ("m#2", "m", 2, 6),
        ("m#3", "m", 3, 7),
        ("s#1", "s", 1, 40),  # the agent's own seed
        ("s#2", "s", 2, 41),
        ("r#1", "r", 1, None),  # `random` draws per seat name: no seed setting
        ("r#2", "r", 2, None),
        ("h", "h", None, None),
    ]
    assert agent_caps(parsed) == {"s#1": pytest.approx(1), "s#2": pytest.approx(1)}  # a cap each
    assert [replicated_agent(n) for n in ("m#3", "h", "a#b", "#1")] == ["m", None, None, None]


def test_one_replicate_is_the_plain_agent_and_keeps_the_config_hash() -> None:
    plain = parse_config({"name": "x", "agents": [{"name": "h", "kind": "hold"}]})
    one = parse_config({"name": "x", "agents": [{"name": "h", "kind": "hold", "replicates": 1}]})
    assert one.config_hash() == plain.config_hash()
    assert [s.name for s in seats(one)] == ["h"]
    with pytest.raises(
        ConfigError, match=r"agents\.0\.replicates: Input should be less than or equal to 100"
    ):
        parse_config({"name": "x", "agents": [{"name": "h", "kind": "hold", "replicates": 101}]})


def test_launch_seats_each_replicate_and_an_export_keeps_the_count(engine: Engine, tmp_path: Path) -> None:
    data = config(tiny_dataset(tmp_path / "data"), [{"name": "m", **MOCK, "replicates": 3}])
    cohort_id, _ = launch_cohort(engine, data)
    with Session(engine) as session:
        rows = session.exec(
            select(AgentRow).where(AgentRow.cohort_id == cohort_id).order_by(col(AgentRow.id))
        ).all()
    assert [(r.name, r.model_id, r.settings_json["seed"]) for r in rows] == [
        ("m#1", "mock/seeded", 0),
        ("m#2", "mock/seeded", 1),
        ("m#3", "mock/seeded", 2),
    ]
    assert "replicates = 3" in config_toml(parse_config(data).model_dump(mode="json"))


def test_replicates_decide_apart_and_the_board_shows_their_mean(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        f'name = "reps"\ndataset = "{tiny_dataset(tmp_path / "data")}"\nstart = 2025-01-01T00:00:00Z\n'
        '[schedule]\nevery = "7d"\nrounds = 2\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
        '[[agents]]\nname = "m"\nkind = "llm"\nprovider = "mock"\nmodel = "seeded"\nreplicates = 3\n'
        "mock = { noise = 0.3, markets = 2 }\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    replayed = runner.invoke(app, ["replay", str(path), "--each-replicate", "--database-url", db_url])
    assert replayed.exit_code == 0, replayed.output
    assert "(replay, 3 agents)" in replayed.output
    assert all(f"m#{k}" in replayed.output for k in (1, 2, 3)) and "m ×3 (mock)" in replayed.output
    board = json.loads(runner.invoke(app, ["leaderboard", "--json", "--database-url", db_url]).stdout)
    (row,) = board["agents"]
    copies = board["replicate_rows"]
    assert row["agent"] == "m" and row["replicates"] == 3 and len(copies) == 3
    assert row["return_pct"] == pytest.approx(sum(c["return_pct"] for c in copies) / 3)
    # different sampling seeds: the copies state different probabilities
    assert len({c["stated_brier"] for c in copies}) == 3
    plain = runner.invoke(app, ["leaderboard", "--database-url", db_url])
    assert "m#1" not in plain.stdout and "m ×3" in plain.stdout  # each replicate only on demand
