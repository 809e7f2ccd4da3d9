"""A cohort's stored log as polars frames: the tables a report exports and the dashboard shows.

Each function reads one kind of row for one cohort, joins the names a reader needs (agent name,
market question, round index) and sorts on a unique key, so the same log always gives the same
frame, row for row (reports rebuilt from a finished cohort are byte-identical). Nothing is
computed here; scores come from ``arena.scoring``. Money is ``Decimal`` exactly as stored, times
are UTC, JSON columns are JSON text (see ``arena.db.columnar``).
"""

from __future__ import annotations

import polars as pl
from sqlalchemy import select
from sqlalchemy.engine import Connection

from agents.baselines import BASELINE_KINDS
from arena.db.columnar import read_frame
from arena.db.models import (
    AgentRow,
    DecisionRow,
    FillRow,
    MarketRow,
    PortfolioSnapshotRow,
    PositionRow,
    ResolutionRow,
    RoundRow,
)
from arena.reports.catalog import cohort_market_ids

AGENT = AgentRow.name.label("agent")  # type: ignore[attr-defined]
QUESTION = MarketRow.question.label("question")  # type: ignore[attr-defined]
DECISION_STATUSES = ("done", "rejected", "error", "claimed")


def agents(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """The cohort's seats: id, name, kind, model, whether it is a baseline, settings (JSON text)."""
    query = select(
        AgentRow.id.label("agent_id"),  # type: ignore[union-attr]
        AgentRow.cohort_id,
        AGENT,
        AgentRow.kind,
        AgentRow.model_id,
        AgentRow.settings_json,
        AgentRow.created_at,
    ).where(AgentRow.cohort_id == cohort_id)
    frame = read_frame(connection, query).sort("agent")
    return frame.with_columns(baseline=pl.col("kind").is_in(sorted(BASELINE_KINDS))).select(
        "agent_id", "cohort_id", "agent", "kind", "baseline", "model_id", "settings_json", "created_at"
    )


def rounds(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """One row per round with how its decisions ended (done, rejected, error, still claimed)."""
    query = select(
        RoundRow.id.label("round_id"),  # type: ignore[union-attr]
        RoundRow.round_index,
        RoundRow.scheduled_at,
        RoundRow.status,
        RoundRow.market_count,
        RoundRow.snapshot_hash,
        RoundRow.started_at,
        RoundRow.finished_at,
    ).where(RoundRow.cohort_id == cohort_id)
    table = read_frame(connection, query)
    outcomes = read_frame(
        connection,
        select(DecisionRow.round_id, DecisionRow.status).where(DecisionRow.cohort_id == cohort_id),
    )
    counts = outcomes.group_by("round_id").agg(
        pl.len().alias("decisions"), *((pl.col("status") == s).sum().alias(s) for s in DECISION_STATUSES)
    )
    filled = [pl.col(c).fill_null(0) for c in ("decisions", *DECISION_STATUSES)]
    return table.join(counts, on="round_id", how="left").with_columns(filled).sort("round_index")


def decisions(
    connection: Connection, cohort_id: str, *, prompts: bool = True, agent: str | None = None
) -> pl.DataFrame:
    """Every decision (of ``agent``, or all) with outcome, reasoning, usage and, if ``prompts``,
    the raw prompt and response."""
    columns = [
        DecisionRow.id.label("decision_id"),  # type: ignore[union-attr]
        RoundRow.round_index,
        RoundRow.scheduled_at,
        AGENT,
        DecisionRow.status,
        DecisionRow.error_kind,
        DecisionRow.error,
        DecisionRow.reasoning,
        DecisionRow.actions_json,
        DecisionRow.probabilities_json,
        DecisionRow.cash_at_start,
        DecisionRow.max_bet,
        DecisionRow.prompt_tokens,
        DecisionRow.completion_tokens,
        DecisionRow.cost_usd,
        DecisionRow.latency_s,
        DecisionRow.attempts,
        DecisionRow.prompt_version,
        DecisionRow.prompt_hash,
        DecisionRow.claimed_at,
        DecisionRow.decided_at,
    ]
    if prompts:
        columns += [DecisionRow.raw_prompt, DecisionRow.raw_response]
    query = (
        select(*columns)
        .join(RoundRow, RoundRow.id == DecisionRow.round_id)  # type: ignore[arg-type]
        .join(AgentRow, AgentRow.id == DecisionRow.agent_id)  # type: ignore[arg-type]
        .where(DecisionRow.cohort_id == cohort_id)
    )
    if agent is not None:
        query = query.where(AgentRow.name == agent)
    return read_frame(connection, query).sort("round_index", "agent", "decision_id")


def fills(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every buy, sell and settlement of the cohort's agents, in the order they happened."""
    query = (
        select(
            FillRow.id.label("fill_id"),  # type: ignore[union-attr]
            FillRow.filled_at,
            AGENT,
            FillRow.kind,
            FillRow.market_id,
            QUESTION,
            FillRow.outcome,
            FillRow.position_id,
            FillRow.amount,
            FillRow.price,
            FillRow.shares,
            FillRow.fee,
            FillRow.realized_pnl,
            FillRow.max_bet,
            FillRow.decision_id,
            FillRow.leg_index,
        )
        .join(AgentRow, AgentRow.id == FillRow.agent_id)
        .join(MarketRow, MarketRow.id == FillRow.market_id)
        .where(AgentRow.cohort_id == cohort_id)
    )
    return read_frame(connection, query).sort("filled_at", "fill_id")


def positions(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every position (open, closed, settled) with its last mark and its market's resolution."""
    query = (
        select(
            AGENT,
            PositionRow.position_id,
            PositionRow.market_id,
            QUESTION,
            PositionRow.outcome,
            PositionRow.status,
            PositionRow.shares,
            PositionRow.cost_basis,
            PositionRow.realized_pnl,
            PositionRow.last_price,
            PositionRow.last_marked_at,
            PositionRow.stale,
            PositionRow.opened_at,
            PositionRow.closed_at,
            ResolutionRow.kind.label("resolution"),  # type: ignore[attr-defined]
            ResolutionRow.resolved_at,
        )
        .join(AgentRow, AgentRow.id == PositionRow.agent_id)
        .join(MarketRow, MarketRow.id == PositionRow.market_id)
        .outerjoin(ResolutionRow, ResolutionRow.market_id == PositionRow.market_id)
        .where(AgentRow.cohort_id == cohort_id)
    )
    return read_frame(connection, query).sort("agent", "opened_at", "position_id")


def portfolio_snapshots(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every portfolio mark of the cohort's agents (the equity curves), by agent and time."""
    query = (
        select(
            AGENT,
            PortfolioSnapshotRow.marked_at,
            PortfolioSnapshotRow.cash,
            PortfolioSnapshotRow.positions_value,
            PortfolioSnapshotRow.total_value,
            PortfolioSnapshotRow.realized_pnl,
            PortfolioSnapshotRow.unrealized_pnl,
            PortfolioSnapshotRow.open_positions,
            PortfolioSnapshotRow.stale_count,
        )
        .join(AgentRow, AgentRow.id == PortfolioSnapshotRow.agent_id)
        .where(PortfolioSnapshotRow.cohort_id == cohort_id)
    )
    return read_frame(connection, query).sort("agent", "marked_at")


def resolutions(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Resolutions of every market the cohort offered in a round or traded."""
    query = (
        select(
            ResolutionRow.market_id,
            QUESTION,
            ResolutionRow.kind,
            ResolutionRow.payouts_json,
            ResolutionRow.resolved_at,
            ResolutionRow.detected_at,
            ResolutionRow.source,
            ResolutionRow.override_note,
        )
        .join(MarketRow, MarketRow.id == ResolutionRow.market_id)
        .where(ResolutionRow.market_id.in_(cohort_market_ids(cohort_id)))  # type: ignore[attr-defined]
    )
    return read_frame(connection, query).sort("market_id")
