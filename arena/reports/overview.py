"""Read models of cohorts for the CLI: a list, and one cohort's agents, rounds and stale positions.

Values come only from stored marks (``portfolio_snapshot``), never from cost: an agent not
marked yet shows no value rather than a made-up one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from arena.cohorts.config import CohortConfig, config_from_frozen
from arena.db.models import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    MarketRow,
    PortfolioCloseRow,
    PortfolioSnapshotRow,
    PositionRow,
    RoundRow,
    WorkUnitRow,
)
from arena.db.statuses import FINISHED_ROUND_STATUSES
from arena.engine.books.completion import StalePosition, finished_rounds, waiting_since
from arena.engine.store.charges import charges_by_agent
from arena.reports.errors import ERROR_STATUSES


@dataclass(frozen=True)
class CohortSummary:
    id: str
    name: str
    mode: str
    status: str
    agents: int
    rounds_done: int
    rounds_planned: str
    created_at: datetime
    # The cohort's latest queue unit (``arena replay --queue``): queued, running (by whom), done,
    # failed; None when it was never queued.
    unit: str | None = None


@dataclass(frozen=True)
class AgentSummary:
    name: str
    kind: str
    model: str | None
    value: Decimal | None
    pnl: Decimal | None
    return_pct: Decimal | None
    cash: Decimal | None
    open_positions: int
    bets: int
    errors: int  # decisions that failed or were refused (``arena.reports.errors``)
    missed: int  # decisions of rounds found too late (live): never asked, so not errors
    # Provider spend in dollars: its decisions' and the paid requests no decision holds (an
    # attempt whose worker died, a decision given up on at its timeout; ``store.charges``).
    cost: Decimal
    mock: bool = False  # an LLM agent of the mock provider (its model is ``mock/…``)


@dataclass
class CohortOverview:
    id: str
    status: str
    config: CohortConfig
    config_hash: str
    git_commit: str | None
    excluded: int
    rounds_done: int
    rounds_planned: int | None
    agents: list[AgentSummary] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    # Rounds that asked nobody because they offered nothing to trade: (round index, why).
    empty_rounds: list[tuple[int, str]] = field(default_factory=list)


def list_cohorts(engine: Engine) -> list[CohortSummary]:
    with Session(engine) as session:
        cohorts = session.exec(select(CohortRow).order_by(col(CohortRow.created_at).desc())).all()
        agents = _grouped_count(session, select(AgentRow.cohort_id, func.count()))
        finished = col(RoundRow.status).in_(FINISHED_ROUND_STATUSES)
        done = _grouped_count(session, select(RoundRow.cohort_id, func.count()).where(finished))
        replays = select(WorkUnitRow).where(WorkUnitRow.kind == "replay").order_by(col(WorkUnitRow.id))
        units = {u.cohort_id: _describe_unit(u) for u in session.exec(replays)}  # each cohort's latest
    return [
        CohortSummary(
            c.id,
            c.name,
            c.mode,
            c.status,
            agents.get(c.id, 0),
            done.get(c.id, 0),
            str((c.config_json.get("schedule") or {}).get("rounds") or "end"),
            c.created_at,
            units.get(c.id),
        )
        for c in cohorts
    ]


def _describe_unit(unit: WorkUnitRow) -> str:
    """``running on host:pid``, ``queued``, ``done`` or ``failed``: a unit's state for a reader."""
    return f"running on {unit.lease_owner}" if unit.state == "running" else unit.state


def cohort_mode(engine: Engine, cohort_id: str) -> str | None:
    """The cohort's mode (``replay`` or ``live``), or ``None`` for an unknown cohort: enough to route
    a command without parsing the frozen config that the command's runtime will parse."""
    with Session(engine) as session:
        return session.exec(select(CohortRow.mode).where(CohortRow.id == cohort_id)).first()


def cohort_overview(engine: Engine, cohort_id: str, *, now: datetime | None = None) -> CohortOverview | None:
    """The cohort's state; ``now`` (default: its latest mark) dates the stale-position report."""
    with Session(engine) as session:
        row = session.get(CohortRow, cohort_id)
        if row is None:
            return None
        config = config_from_frozen(row.config_json)
        agents = session.exec(
            select(AgentRow).where(AgentRow.cohort_id == cohort_id).order_by(col(AgentRow.id))
        ).all()
        ids = [a.id for a in agents if a.id is not None]
        latest = _latest_snapshots(session, ids)
        counts = _activity(session, ids)
        costs = _costs(session, cohort_id)
        overview = CohortOverview(
            id=row.id,
            status=row.status,
            config=config,
            config_hash=row.config_hash,
            git_commit=row.git_commit,
            excluded=row.excluded_markets,
            rounds_done=finished_rounds(session, cohort_id),
            rounds_planned=config.schedule.rounds,
            agents=[_agent_summary(a, latest.get(a.id or 0), config, counts, costs) for a in agents],
            empty_rounds=_empty_rounds(session, cohort_id),
        )
        when = now or max((s.marked_at for s in latest.values()), default=None)
        if when is not None:
            limit = timedelta(days=config.marks.stale_after_days)
            overview.stale = _stale_lines(session, ids, {a.id: a.name for a in agents}, when, limit)
    return overview


def _costs(session: Session, cohort_id: str) -> dict[int, Decimal]:
    """Each agent's provider spend: its decisions' costs and its charges no decision holds."""
    query = (
        select(DecisionRow.agent_id, func.sum(DecisionRow.cost_usd))
        .where(DecisionRow.cohort_id == cohort_id)
        .group_by(col(DecisionRow.agent_id))
    )
    costs = {agent_id: Decimal(total or 0) for agent_id, total in session.exec(query).all()}
    for agent_id, charged in charges_by_agent(session, cohort_id).items():
        costs[agent_id] = costs.get(agent_id, Decimal(0)) + charged
    return costs


def _empty_rounds(session: Session, cohort_id: str) -> list[tuple[int, str]]:
    rows = session.exec(
        select(RoundRow.round_index, RoundRow.note)
        .where(RoundRow.cohort_id == cohort_id, RoundRow.status == "empty")
        .order_by(col(RoundRow.round_index))
    ).all()
    return [(index, note or "") for index, note in rows]


def _activity(session: Session, ids: list[int]) -> dict[str, dict[int, int]]:
    """Per agent: bets placed, decisions that errored, decisions missed, positions open."""
    return {
        "bets": _grouped_count(
            session,
            select(FillRow.agent_id, func.count()).where(
                col(FillRow.agent_id).in_(ids), FillRow.kind == "buy"
            ),
        ),
        "errors": _grouped_count(
            session,
            select(DecisionRow.agent_id, func.count()).where(
                col(DecisionRow.agent_id).in_(ids), col(DecisionRow.status).in_(ERROR_STATUSES)
            ),
        ),
        "missed": _grouped_count(
            session,
            select(DecisionRow.agent_id, func.count()).where(
                col(DecisionRow.agent_id).in_(ids), DecisionRow.status == "missed"
            ),
        ),
        "open": _grouped_count(
            session,
            select(PositionRow.agent_id, func.count()).where(
                col(PositionRow.agent_id).in_(ids), PositionRow.status == "open"
            ),
        ),
    }


def _grouped_count(session: Session, query: Any) -> dict[Any, int]:
    """``SELECT key, count(*) ... GROUP BY key`` as a dict; ``query`` selects the key and the count."""
    return {key: int(n) for key, n in session.exec(query.group_by(query.selected_columns[0])).all()}


def _latest_snapshots(session: Session, agent_ids: list[int]) -> dict[int, PortfolioSnapshotRow]:
    """Each agent's newest mark: the close of its latest day (a row per day, not per mark)."""
    newest = (
        select(PortfolioCloseRow.agent_id, func.max(PortfolioCloseRow.closed_at).label("at"))
        .where(col(PortfolioCloseRow.agent_id).in_(agent_ids))
        .group_by(col(PortfolioCloseRow.agent_id))
        .subquery()
    )
    rows = session.exec(
        select(PortfolioSnapshotRow).join(
            newest,
            (PortfolioSnapshotRow.agent_id == newest.c.agent_id)
            & (PortfolioSnapshotRow.marked_at == newest.c.at),  # type: ignore[arg-type]
        )
    ).all()
    return {r.agent_id: r for r in rows}


def _agent_summary(
    a: AgentRow,
    snap: PortfolioSnapshotRow | None,
    config: CohortConfig,
    counts: dict[str, dict[int, int]],
    costs: dict[int, Decimal],
) -> AgentSummary:
    agent_id = a.id or 0
    bankroll = config.rules.bankroll
    pnl = None if snap is None else snap.total_value - bankroll
    return AgentSummary(
        name=a.name,
        kind=a.kind,
        model=a.model_id,
        value=None if snap is None else snap.total_value,
        pnl=pnl,
        return_pct=None if pnl is None else pnl / bankroll * 100,
        cash=None if snap is None else snap.cash,
        open_positions=counts["open"].get(agent_id, 0),
        bets=counts["bets"].get(agent_id, 0),
        errors=counts["errors"].get(agent_id, 0),
        missed=counts["missed"].get(agent_id, 0),
        cost=costs.get(agent_id, Decimal(0)),
        mock=a.kind == "llm" and (a.settings_json or {}).get("provider") == "mock",
    )


def _stale_lines(
    session: Session, agent_ids: list[int], names: dict[int | None, str], now: datetime, limit: timedelta
) -> list[str]:
    """Open positions whose market closed longer than ``limit`` ago, or unmarked for that long."""
    rows = session.exec(
        select(PositionRow, MarketRow.close_time)
        .join(MarketRow, col(MarketRow.id) == col(PositionRow.market_id))
        .where(col(PositionRow.agent_id).in_(agent_ids), PositionRow.status == "open")
    ).all()
    lines = []
    for pos, close in rows:
        stale = waiting_since(close, pos.last_marked_at, now, limit)
        if stale is not None:
            lines.append(
                StalePosition(names[pos.agent_id], pos.position_id, pos.market_id, *stale).describe(now)
            )
    return lines
