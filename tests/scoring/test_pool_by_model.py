"""`arena leaderboard --pool-by model`: rows are model identities, never display names (both backends)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import select
from typer.testing import CliRunner

from agents.registry import model_identity
from arena.cli import app
from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    FillRow,
    PortfolioSnapshotRow,
    PositionRow,
    ResolutionRow,
    RoundRow,
)
from arena.engine.books.marks import record_closes
from tests.scoring.stored import T0, _cohort, _decision, _market

GPT = "llm openai/gpt-4o @ https://openrouter.ai/api/v1 prompt v1"
CLAUDE = "llm anthropic/claude @ https://openrouter.ai/api/v1 prompt v1"
MARKETS = ["polymarket:a", "polymarket:b", "polymarket:c"]


def _world(engine: Engine) -> None:
    """Three cohorts of $10,000 seats.

    c1: ``llm`` is gpt-4o (default endpoint): bets $500 YES at 0.40 and $1,250 YES at 0.50 (max bet
        $2,500), YES wins both; marked at $11,000. ``hold`` decides and never bets.
    c2: ``llm`` is claude: no bets, marked at $12,000. ``gpt`` is gpt-4o with the endpoint spelled
        out: bets $2,500 NO at 0.50 on c, YES wins; marked at $9,500. ``hold`` as in c1.
    c3: ``gpt-4o`` is gpt-4o but never decided; ``hold`` as in c1.
    """
    with session_scope(engine) as s:
        s.add_all([_cohort(c, {"rules": {"bankroll": "10000"}}) for c in ("c1", "c2", "c3")])
        s.add_all([_market(m, ["YES", "NO"]) for m in MARKETS])
        s.flush()
        seats = {
            ("c1", "llm"): ("llm", {"model": "openai/gpt-4o"}),
            ("c2", "llm"): ("llm", {"model": "anthropic/claude"}),
            ("c2", "gpt"): ("llm", {"model": "openai/gpt-4o", "base_url": "https://openrouter.ai/api/v1/"}),
            ("c3", "gpt-4o"): ("llm", {"model": "openai/gpt-4o"}),
            **{(c, "hold"): ("hold", {}) for c in ("c1", "c2", "c3")},
        }
        agents = {
            seat: AgentRow(cohort_id=seat[0], name=seat[1], kind=kind, settings_json=settings, created_at=T0)
            for seat, (kind, settings) in seats.items()
        }
        rounds = {
            c: RoundRow(cohort_id=c, round_index=0, scheduled_at=T0, status="done")
            for c in ("c1", "c2", "c3")
        }
        s.add_all([*agents.values(), *rounds.values()])
        s.flush()
        decided = [seat for seat in seats if seat != ("c3", "gpt-4o")]
        decisions = {
            seat: _decision(
                rounds[seat[0]].id,
                agents[seat].id,
                seat[0],
                decided_at=T0,
                cash_at_start=Decimal(10000),
                max_bet=Decimal(2500),
            )
            for seat in decided
        }
        s.add_all(decisions.values())
        s.flush()
        bets = [
            (("c1", "llm"), MARKETS[0], "YES", 500, "0.4"),
            (("c1", "llm"), MARKETS[1], "YES", 1250, "0.5"),
            (("c2", "gpt"), MARKETS[2], "NO", 2500, "0.5"),
        ]
        for i, (seat, market, side, amount, price) in enumerate(bets):
            agent_id = agents[seat].id
            shares = Decimal(amount) / Decimal(price)
            s.add(
                PositionRow(
                    agent_id=agent_id,
                    position_id=f"p{i}",
                    market_id=market,
                    outcome=side,
                    shares=shares,
                    cost_basis=Decimal(amount),
                    opened_at=T0,
                    updated_at=T0,
                )
            )
            s.flush()
            s.add(
                FillRow(
                    decision_id=decisions[seat].id,
                    leg_index=i,
                    agent_id=agent_id,
                    market_id=market,
                    outcome=side,
                    position_id=f"p{i}",
                    kind="buy",
                    amount=Decimal(amount),
                    price=Decimal(price),
                    shares=shares,
                    max_bet=Decimal(2500),
                    filled_at=T0,
                )
            )
        s.add_all(
            [
                ResolutionRow(
                    market_id=m,
                    kind="YES",
                    payouts_json={"YES": "1", "NO": "0"},
                    resolved_at=T0,
                    detected_at=T0,
                )
                for m in MARKETS
            ]
        )
        marks = [
            _mark(agents[("c1", "llm")].id, "c1", 11000),
            _mark(agents[("c2", "llm")].id, "c2", 12000),
            _mark(agents[("c2", "gpt")].id, "c2", 9500),
        ]
        s.add_all([PortfolioSnapshotRow(**m) for m in marks])
        s.flush()
        record_closes(s, marks)


def _mark(agent_id: int | None, cohort: str, value: int) -> dict[str, Any]:
    return {
        "agent_id": agent_id,
        "cohort_id": cohort,
        "marked_at": T0,
        "cash": Decimal(value),
        "positions_value": Decimal(0),
        "total_value": Decimal(value),
        "realized_pnl": Decimal(value - 10000),
        "unrealized_pnl": Decimal(0),
    }


def _board(engine: Engine, *args: str) -> dict[str, dict[str, Any]]:
    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(
        app, ["leaderboard", "--json", "--all", "--replicates", "20", "--database-url", url, *args]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    return {row["agent"]: row for row in document["agents"]} | {"": document}


def test_pooling_by_model_keys_on_identity_and_skips_undecided_seats(engine: Engine) -> None:
    _world(engine)
    rows = _board(engine, "--pool-by", "model")
    assert rows[""]["pool_by"] == "model"
    assert set(rows) - {""} == {GPT, CLAUDE, "hold"}
    gpt = rows[GPT]
    # c1 llm (+1,000) and c2 gpt (−500) are one model; c3's gpt-4o never decided and is left out:
    # 500 / 20,000 = 2.5% (with c3's idle $10,000 it would read 500 / 30,000 = 1.67%).
    assert (gpt["cohorts"], gpt["pnl"], gpt["bankroll"]) == (2, 500.0, 20000.0)
    assert gpt["return_pct"] == pytest.approx(2.5)
    # fa Brier per bet: c1 (0.2 − 1)² = 0.64 and (0.5 − 1)² = 0.25; c2 a max NO bet: P(YES) = 0, 1.0.
    # Pooled over bets: (0.64 + 0.25 + 1) / 3 = 0.63; Forecaster Arena's mean of cohorts: (0.445 + 1.0) / 2.
    assert gpt["brier"] == pytest.approx(0.63)
    assert gpt["brier_cohorts_mean"] == pytest.approx(0.7225)
    assert (rows[CLAUDE]["pnl"], rows[CLAUDE]["return_pct"]) == (2000.0, pytest.approx(20.0))
    assert rows["hold"]["cohorts"] == 3  # a baseline is its kind and settings


def test_pooling_by_name_merges_different_models_that_share_a_name(engine: Engine) -> None:
    _world(engine)
    rows = _board(engine)
    # "llm" is gpt-4o in c1 and claude in c2: by name they merge, 3,000 / 20,000 = 15%.
    assert (rows["llm"]["cohorts"], rows["llm"]["pnl"]) == (2, 3000.0)
    assert rows["llm"]["return_pct"] == pytest.approx(15.0)
    assert {"gpt", "gpt-4o"} <= set(rows)
    result = CliRunner().invoke(app, ["leaderboard", "--pool-by", "size", "--database-url", "sqlite://"])
    assert result.exit_code == 2 and "--pool-by 'size': choose 'name' or 'model'" in result.output


def test_one_model_served_on_two_local_ports_is_one_row(engine: Engine) -> None:
    """c1's ``llm`` and c2's ``gpt`` become the same local model behind two ports (Ollama's and
    vLLM's): one bettor, as the port says how a server was started, not what it serves."""
    _world(engine)
    with session_scope(engine) as s:
        for cohort, name, url in (
            ("c1", "llm", "http://127.0.0.1:11434/v1"),
            ("c2", "gpt", "http://localhost:8000/v1"),
        ):
            seat = s.exec(select(AgentRow).where(AgentRow.cohort_id == cohort, AgentRow.name == name)).one()
            seat.settings_json = {"model": "llama3.1:8b", "base_url": url, "api_key_env": ""}
            s.add(seat)
    rows = _board(engine, "--pool-by", "model")
    local = rows["llm llama3.1:8b @ local prompt v1"]
    assert (local["cohorts"], local["pnl"]) == (2, 500.0)  # +1,000 in c1, −500 in c2


@pytest.mark.parametrize(
    ("kind", "settings", "identity"),
    [
        ("kelly", {}, "kelly"),
        ("kelly", {"edge_threshold": "0.1", "max_markets": 3}, "kelly (edge_threshold 0.1, max_markets 3)"),
        ("favorite", {"fraction": 0.1}, "favorite (fraction 0.1)"),
        ("crowd", {"method": "mean"}, "crowd (method mean)"),
        (
            "llm",
            {"model": "m", "base_url": "http://[::1]:8080/v1", "api_key_env": ""},
            "llm m @ local prompt v1",
        ),
        (
            "llm",
            {"model": "m", "base_url": "http://10.0.0.2:8000/v1", "api_key_env": "K"},
            "llm m @ http://10.0.0.2:8000/v1 prompt v1",
        ),
    ],
)
def test_identities_are_readable_and_name_only_what_differs_from_the_defaults(
    kind: str, settings: dict[str, Any], identity: str
) -> None:
    assert model_identity(kind, settings) == identity
