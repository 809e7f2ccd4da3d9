"""A small stored arena (two cohorts, three markets) in a real database, for loader and CLI tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine

from arena.db.engine import make_engine, session_scope
from arena.db.migrate import upgrade
from arena.db.models import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    MarketRow,
    MarketSnapshotRow,
    PortfolioSnapshotRow,
    PositionRow,
    ResolutionRow,
    RoundMarketRow,
    RoundRow,
)
from arena.engine.books.marks import record_closes

T0 = datetime(2025, 3, 1, tzinfo=UTC)
BIN, MULTI, VOID = "polymarket:bin", "polymarket:multi", "manifold:void"


def _market(market_id: str, outcomes: list[str], category: str | None = None) -> MarketRow:
    venue, venue_id = market_id.split(":")
    return MarketRow(
        id=market_id,
        venue=venue,
        venue_id=venue_id,
        question="?",
        outcomes_json=outcomes,
        category=category,
        first_seen_at=T0,
        updated_at=T0,
    )


def _cohort(cohort_id: str, config: dict) -> CohortRow:
    return CohortRow(
        id=cohort_id,
        name=cohort_id,
        mode="replay",
        status="running",
        config_json=config,
        config_hash="h",
        created_at=T0,
    )


def _decision(round_id: int, agent_id: int, cohort_id: str, **values) -> DecisionRow:
    return DecisionRow(
        round_id=round_id,
        agent_id=agent_id,
        cohort_id=cohort_id,
        claim_token="t",
        status="done",
        claimed_at=T0,
        **values,
    )


def populate(engine: Engine) -> None:
    """Two cohorts; c1 has an LLM that bets and states, and a hold bot; c2 has one idle LLM."""
    with session_scope(engine) as s:
        s.add_all([_cohort("c1", {"rules": {"bankroll": "5000"}}), _cohort("c2", {})])
        s.add_all(
            [
                _market(BIN, ["YES", "NO"], "politics"),
                _market(MULTI, ["A", "B", "C"]),
                _market(VOID, ["YES", "NO"]),
            ]
        )
        s.flush()
        llm, hold, other = (
            AgentRow(cohort_id="c1", name="llm-1", kind="llm", created_at=T0),
            AgentRow(cohort_id="c1", name="hold", kind="hold", created_at=T0),
            AgentRow(cohort_id="c2", name="llm-1", kind="llm", created_at=T0),
        )
        r0, r1 = (
            RoundRow(cohort_id="c1", round_index=i, scheduled_at=T0 + timedelta(days=i), status="done")
            for i in (0, 1)
        )
        s.add_all([llm, hold, other, r0, r1])
        s.flush()
        s.add_all(
            [
                RoundMarketRow(
                    round_id=r0.id,
                    market_id=BIN,
                    source="clob",
                    observed_at=T0,
                    prices_json={"YES": "0.4", "NO": "0.6"},
                ),
                RoundMarketRow(  # the same prices as the gamma snapshot below: listed from round 1
                    round_id=r1.id,
                    market_id=MULTI,
                    source="gamma",
                    observed_at=T0,
                    prices_json={"A": "0.2", "B": "0.5", "C": "0.3"},
                ),
                MarketSnapshotRow(market_id=BIN, source="gamma", observed_at=T0, prices_json={"YES": "0.41"}),
                MarketSnapshotRow(
                    market_id=BIN,
                    source="clob",
                    observed_at=T0 + timedelta(hours=12),
                    prices_json={"NO": "0.55"},
                ),
                MarketSnapshotRow(
                    market_id=MULTI,
                    source="gamma",
                    observed_at=T0,
                    prices_json={"A": "0.2", "B": "0.5", "C": "0.3"},
                ),
            ]
        )
        d0 = _decision(
            r0.id,
            llm.id,
            "c1",
            decided_at=T0,
            prompt_tokens=100,
            completion_tokens=50,
            cost_usd=Decimal("0.0012345678"),
            latency_s=2.5,
            probabilities_json={BIN: {"NO": 0.7}, MULTI: {"A": 0.1, "B": 0.8}},
            cash_at_start=Decimal(5000),
            max_bet=Decimal(1250),
        )
        d1 = _decision(
            r1.id,
            llm.id,
            "c1",
            decided_at=T0 + timedelta(days=1),
            error="not JSON",
            error_kind="parse",
            probabilities_json={BIN: {"YES": 0.99}},
        )
        s.add_all([d0, d1, _decision(r0.id, hold.id, "c1", decided_at=T0), _decision(r1.id, hold.id, "c1")])
        s.add(
            PositionRow(
                agent_id=llm.id,
                position_id="p1",
                market_id=BIN,
                outcome="YES",
                status="settled",
                shares=Decimal(0),
                cost_basis=Decimal(0),
                opened_at=T0,
                updated_at=T0,
            )
        )
        s.flush()
        s.add_all(
            [
                FillRow(
                    decision_id=d0.id,
                    leg_index=0,
                    agent_id=llm.id,
                    market_id=BIN,
                    outcome="YES",
                    position_id="p1",
                    kind="buy",
                    amount=Decimal(500),
                    price=Decimal("0.4"),
                    shares=Decimal(1250),
                    max_bet=Decimal(1250),
                    filled_at=T0,
                ),
                FillRow(
                    agent_id=llm.id,
                    market_id=BIN,
                    outcome="YES",
                    position_id="p1",
                    kind="settle",
                    amount=Decimal(1250),
                    price=Decimal(1),
                    shares=Decimal(1250),
                    realized_pnl=Decimal(750),
                    filled_at=T0 + timedelta(days=3),
                ),
                ResolutionRow(
                    market_id=BIN,
                    kind="YES",
                    payouts_json={"YES": "1", "NO": "0"},
                    resolved_at=T0 + timedelta(days=3),
                    detected_at=T0 + timedelta(days=3),
                ),
                ResolutionRow(
                    market_id=MULTI,
                    kind="OUTCOME",
                    payouts_json={"A": "0", "B": "1", "C": "0"},
                    resolved_at=T0 + timedelta(days=3),
                    detected_at=T0 + timedelta(days=3),
                ),
            ]
        )
        mark = {
            "agent_id": llm.id,
            "cohort_id": "c1",
            "marked_at": T0 + timedelta(days=3),
            "cash": Decimal(5750),
            "positions_value": Decimal(0),
            "total_value": Decimal(5750),
            "realized_pnl": Decimal(750),
            "unrealized_pnl": Decimal(0),
        }
        s.add(PortfolioSnapshotRow(**mark))
        record_closes(s, [mark])


def populated_database(directory: Path) -> str:
    """The URL of a new SQLite database at the schema's head in ``directory``, ``populate``d."""
    url = f"sqlite:///{directory / 'arena.db'}"
    upgrade(url)
    engine = make_engine(url)
    populate(engine)
    engine.dispose()
    return url
