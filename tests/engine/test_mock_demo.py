"""`arena demo --with-mock-llm`: an LLM cohort with tools, offline, with no key and no server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import AgentRow, DecisionRow, ToolCallRow

runner = CliRunner()


@pytest.mark.slow
@pytest.mark.usefixtures("offline_demo")
def test_the_demo_with_a_mock_llm_runs_an_llm_cohort_with_tools_offline(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    result = runner.invoke(app, ["demo", "--with-mock-llm", "--database-url", url], catch_exceptions=False)
    out = " ".join(result.output.split())
    assert result.exit_code == 0, out
    assert "mock-llm (mock)" in out  # labelled on the printed leaderboard
    assert "leakage guard" not in out  # a mock knows nothing to leak: no warning about it
    engine = make_engine(url)
    with Session(engine) as session:
        (mock,) = session.exec(select(AgentRow).where(AgentRow.name == "mock-llm")).all()
        statuses = dict(
            session.exec(
                select(DecisionRow.status, func.count())
                .where(DecisionRow.agent_id == mock.id)
                .group_by(col(DecisionRow.status))
            ).all()
        )
        tools = session.exec(select(ToolCallRow.name).where(ToolCallRow.agent_id == mock.id)).all()
    assert mock.model_id == "mock/seeded" and mock.kind == "llm"
    assert statuses.get("done", 0) > 40 and set(statuses) == {"done"}  # every answer valid, every round
    assert set(tools) == {"price_history", "market_details"} and len(tools) == 2 * statuses["done"]
    board = runner.invoke(app, ["leaderboard", "--json", "--database-url", url])
    rows = {row["agent"]: row for row in json.loads(board.output)["agents"]}
    assert rows["mock-llm"]["mock"] is True and rows["mock-llm"]["bets"] > 0
    assert rows["mock-llm"]["leakage_guard"] is None
    assert not any(row["mock"] for name, row in rows.items() if name != "mock-llm")
    (cohort,) = json.loads(runner.invoke(app, ["cohort", "list", "--json", "--database-url", url]).output)
    shown = json.loads(
        runner.invoke(app, ["cohort", "show", cohort["id"], "--json", "--database-url", url]).output
    )
    agents = {a["name"]: a for a in shown["agents"]}
    assert agents["mock-llm"]["model"] == "mock/seeded" and agents["mock-llm"]["mock"] is True
    (report,) = (tmp_path / "home" / "reports").glob("*/report.md")
    assert "mock/seeded" in report.read_text(encoding="utf-8")
