"""What a replay run left in the database, in a form two runs can be compared by (agent names,
not database ids), for tests that disturb a run (crashes, killed or paused workers) and compare
it with an undisturbed one."""

from __future__ import annotations

import json

from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.cohorts.config import config_from_frozen
from arena.db.models import AgentRow, CohortRow, DecisionRow, FillRow, PortfolioSnapshotRow, RoundRow
from arena.engine.store.ledger_store import reconcile
from portfolio.rules import Rules


def fill_count(engine: Engine, cohort_id: str) -> int:
    with Session(engine) as session:
        query = (
            select(func.count())
            .select_from(FillRow)
            .join(AgentRow, col(AgentRow.id) == col(FillRow.agent_id))
        )
        return int(session.exec(query.where(AgentRow.cohort_id == cohort_id)).one())


def ledger_log(engine: Engine, cohort_id: str) -> dict[str, list[tuple[object, ...]]]:
    """Everything a run produced, keyed by agent name instead of database ids."""
    with Session(engine) as session:
        names = dict(
            session.exec(select(AgentRow.id, AgentRow.name).where(AgentRow.cohort_id == cohort_id)).all()
        )
        fills = session.exec(
            select(FillRow).where(col(FillRow.agent_id).in_(names)).order_by(col(FillRow.id))
        ).all()
        marks = session.exec(
            select(PortfolioSnapshotRow).where(PortfolioSnapshotRow.cohort_id == cohort_id)
        ).all()
        decisions = session.exec(
            select(DecisionRow, RoundRow.round_index)
            .join(RoundRow, col(RoundRow.id) == col(DecisionRow.round_id))
            .where(DecisionRow.cohort_id == cohort_id)
        ).all()
    return {
        "fills": sorted(
            (
                names[f.agent_id],
                f.kind,
                f.market_id,
                f.outcome,
                f.position_id,
                f.amount,
                f.price,
                f.shares,
                f.filled_at,
            )
            for f in fills
        ),
        "marks": sorted((names[m.agent_id], m.marked_at, m.cash, m.total_value) for m in marks),
        "decisions": sorted(
            (names[d.agent_id], index, d.status, d.cash_at_start, json.dumps(d.actions_json, sort_keys=True))
            for d, index in decisions
        ),
    }


def cohort_rules(engine: Engine, cohort_id: str) -> Rules:
    with Session(engine) as session:
        row = session.get(CohortRow, cohort_id)
        assert row is not None
        return config_from_frozen(row.config_json).rules.to_rules()


def assert_ledgers_reconcile(engine: Engine, cohort_id: str) -> None:
    """Every agent's ledger equals its fill log, and each round has one decision per agent."""
    with Session(engine) as session:
        agent_ids = [
            a for a in session.exec(select(AgentRow.id).where(AgentRow.cohort_id == cohort_id)).all() if a
        ]
        per_round = session.exec(
            select(DecisionRow.round_id, func.count())
            .where(DecisionRow.cohort_id == cohort_id)
            .group_by(col(DecisionRow.round_id))
        ).all()
        rounds = session.exec(
            select(func.count()).select_from(RoundRow).where(RoundRow.cohort_id == cohort_id)
        ).one()
        assert all(n == len(agent_ids) for _, n in per_round) and len(per_round) == rounds
        assert reconcile(session, cohort_rules(engine, cohort_id), agent_ids) == []
