"""A cohort's stored log as polars frames: the tables a report exports and the dashboard shows.

Each function reads one kind of row for one cohort, joins the names a reader needs (agent name,
market question, round index) and sorts on a unique key, so the same log always gives the same
frame, row for row (reports rebuilt from a finished cohort are byte-identical). Nothing is
computed here; scores come from ``arena.scoring``. Money is ``Decimal`` exactly as stored, times
are UTC, JSON columns are JSON text (see ``arena.db.columnar``).
"""

from __future__ import annotations

from typing import Any

import polars as pl
from sqlalchemy import Label, Select, select
from sqlalchemy.engine import Connection
from sqlmodel import col

from agents.baselines import BASELINE_KINDS
from arena.db.columnar import read_frame
from arena.db.models import (
    AgentRow,
    DecisionRow,
    FillRow,
    LLMRequestRow,
    MarketRow,
    PortfolioSnapshotRow,
    PositionRow,
    ResolutionRow,
    RoundRow,
    ToolCallRow,
)
from arena.reports.catalog import cohort_market_ids

AGENT: Label[str] = col(AgentRow.name).label("agent")
QUESTION: Label[str] = col(MarketRow.question).label("question")
DECISION_STATUSES = ("done", "rejected", "error", "missed", "claimed")


def agents(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """The cohort's seats: id, name, kind, model, whether it is a baseline, settings (JSON text)."""
    query = select(
        col(AgentRow.id).label("agent_id"),
        col(AgentRow.cohort_id),
        AGENT,
        col(AgentRow.kind),
        col(AgentRow.model_id),
        col(AgentRow.settings_json),
        col(AgentRow.created_at),
    ).where(col(AgentRow.cohort_id) == cohort_id)
    frame = read_frame(connection, query).sort("agent")
    return frame.with_columns(baseline=pl.col("kind").is_in(sorted(BASELINE_KINDS))).select(
        "agent_id", "cohort_id", "agent", "kind", "baseline", "model_id", "settings_json", "created_at"
    )


def rounds(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """One row per round with how its decisions ended (done, rejected, error, missed, still claimed)."""
    query: Select[*tuple[Any, ...]] = select(
        col(RoundRow.id).label("round_id"),
        col(RoundRow.round_index),
        col(RoundRow.scheduled_at),
        col(RoundRow.status),
        col(RoundRow.market_count),
        col(RoundRow.snapshot_hash),
        col(RoundRow.started_at),
        col(RoundRow.finished_at),
    ).where(col(RoundRow.cohort_id) == cohort_id)
    table = read_frame(connection, query)
    outcomes = read_frame(
        connection,
        select(col(DecisionRow.round_id), col(DecisionRow.status)).where(
            col(DecisionRow.cohort_id) == cohort_id
        ),
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
        col(DecisionRow.id).label("decision_id"),
        col(RoundRow.round_index),
        col(RoundRow.scheduled_at),
        AGENT,
        col(DecisionRow.status),
        col(DecisionRow.error_kind),
        col(DecisionRow.error),
        col(DecisionRow.reasoning),
        col(DecisionRow.actions_json),
        col(DecisionRow.probabilities_json),
        col(DecisionRow.cash_at_start),
        col(DecisionRow.max_bet),
        col(DecisionRow.prompt_tokens),
        col(DecisionRow.completion_tokens),
        col(DecisionRow.cost_usd),
        col(DecisionRow.latency_s),
        col(DecisionRow.attempts),
        col(DecisionRow.prompt_version),
        col(DecisionRow.prompt_hash),
        col(DecisionRow.claimed_at),
        col(DecisionRow.decided_at),
    ]
    if prompts:
        columns += [col(DecisionRow.raw_prompt), col(DecisionRow.raw_response)]
    query = _in_cohort(select(*columns), cohort_id)
    if agent is not None:
        query = query.where(col(AgentRow.name) == agent)
    return read_frame(connection, query).sort("round_index", "agent", "decision_id")


def _in_cohort(query: Select[*tuple[Any, ...]], cohort_id: str) -> Select[*tuple[Any, ...]]:
    """``query`` (over decisions, or rows joined to their decision) limited to the cohort, with
    each decision's round and agent joined for the ``round_index`` and ``agent`` columns."""
    return (
        query.join(RoundRow, col(RoundRow.id) == col(DecisionRow.round_id))
        .join(AgentRow, col(AgentRow.id) == col(DecisionRow.agent_id))
        .where(col(DecisionRow.cohort_id) == cohort_id)
    )


def tool_calls(
    connection: Connection, cohort_id: str, *, texts: bool = True, agent: str | None = None
) -> pl.DataFrame:
    """Every research-tool call of the cohort's decisions (of ``agent``, or all), in call order:
    arguments and result as the text stored (NULL past the stored limit: sha256 and size then).
    Without ``texts`` (a report without prompts) only their sizes and digests are kept."""
    query: Select[*tuple[Any, ...]] = select(
        col(ToolCallRow.decision_id),
        col(RoundRow.round_index),
        AGENT,
        col(ToolCallRow.seq),
        col(ToolCallRow.step),
        col(ToolCallRow.name).label("tool"),
        col(ToolCallRow.is_error),
        col(ToolCallRow.latency_s),
        col(ToolCallRow.arguments),
        col(ToolCallRow.arguments_chars),
        col(ToolCallRow.arguments_sha256),
        col(ToolCallRow.result),
        col(ToolCallRow.result_chars),
        col(ToolCallRow.result_sha256),
    ).join(DecisionRow, col(DecisionRow.id) == col(ToolCallRow.decision_id))
    query = _in_cohort(query, cohort_id)
    if agent is not None:
        query = query.where(col(AgentRow.name) == agent)
    frame = read_frame(connection, query).sort("round_index", "agent", "decision_id", "seq")
    return frame if texts else frame.drop("arguments", "result")


def llm_requests(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every provider request of the cohort's decisions: the per-request rows whose sums are the
    decision's tokens, cost and attempts."""
    query: Select[*tuple[Any, ...]] = select(
        col(LLMRequestRow.decision_id),
        col(RoundRow.round_index),
        AGENT,
        col(LLMRequestRow.seq),
        col(LLMRequestRow.outcome),
        col(LLMRequestRow.prompt_tokens),
        col(LLMRequestRow.completion_tokens),
        col(LLMRequestRow.cost_usd),
        col(LLMRequestRow.latency_s),
    ).join(DecisionRow, col(DecisionRow.id) == col(LLMRequestRow.decision_id))
    return read_frame(connection, _in_cohort(query, cohort_id)).sort(
        "round_index", "agent", "decision_id", "seq"
    )


def fills(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every buy, sell and settlement of the cohort's agents, in the order they happened."""
    query: Select[*tuple[Any, ...]] = (
        select(
            col(FillRow.id).label("fill_id"),
            col(FillRow.filled_at),
            AGENT,
            col(FillRow.kind),
            col(FillRow.market_id),
            QUESTION,
            col(FillRow.outcome),
            col(FillRow.position_id),
            col(FillRow.amount),
            col(FillRow.price),
            col(FillRow.shares),
            col(FillRow.fee),
            col(FillRow.realized_pnl),
            col(FillRow.max_bet),
            col(FillRow.decision_id),
            col(FillRow.leg_index),
        )
        .join(AgentRow, col(AgentRow.id) == col(FillRow.agent_id))
        .join(MarketRow, col(MarketRow.id) == col(FillRow.market_id))
        .where(col(AgentRow.cohort_id) == cohort_id)
    )
    return read_frame(connection, query).sort("filled_at", "fill_id")


def positions(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every position (open, closed, settled) with its last mark and its market's resolution."""
    query = (
        select(
            AGENT,
            col(PositionRow.position_id),
            col(PositionRow.market_id),
            QUESTION,
            col(PositionRow.outcome),
            col(PositionRow.status),
            col(PositionRow.shares),
            col(PositionRow.cost_basis),
            col(PositionRow.realized_pnl),
            col(PositionRow.last_price),
            col(PositionRow.last_marked_at),
            col(PositionRow.stale),
            col(PositionRow.opened_at),
            col(PositionRow.closed_at),
            col(ResolutionRow.kind).label("resolution"),
            col(ResolutionRow.resolved_at),
        )
        .join(AgentRow, col(AgentRow.id) == col(PositionRow.agent_id))
        .join(MarketRow, col(MarketRow.id) == col(PositionRow.market_id))
        .outerjoin(ResolutionRow, col(ResolutionRow.market_id) == col(PositionRow.market_id))
        .where(col(AgentRow.cohort_id) == cohort_id)
    )
    return read_frame(connection, query).sort("agent", "opened_at", "position_id")


def position_closes(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Per closed or settled position, the fill that closed it (its settlement, or its last sell):
    the shares held then, what they had cost (``amount − realized_pnl``: the cost basis the fill
    released) and the cash they fetched. The position row itself ends at zero shares and zero
    cost basis, which says nothing about what was at stake."""
    closing = fills(connection, cohort_id).filter(pl.col("kind").is_in(["sell", "settle"]))
    return (
        closing.group_by("agent", "position_id", maintain_order=True)
        .last()
        .select(
            "agent",
            "position_id",
            closing_kind="kind",
            closing_shares="shares",
            closing_cost_basis=pl.col("amount") - pl.col("realized_pnl"),
            closing_amount="amount",
        )
        .sort("agent", "position_id")
    )


def portfolio_snapshots(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every portfolio mark of the cohort's agents (the equity curves), by agent and time."""
    query = (
        select(
            AGENT,
            col(PortfolioSnapshotRow.marked_at),
            col(PortfolioSnapshotRow.cash),
            col(PortfolioSnapshotRow.positions_value),
            col(PortfolioSnapshotRow.total_value),
            col(PortfolioSnapshotRow.realized_pnl),
            col(PortfolioSnapshotRow.unrealized_pnl),
            col(PortfolioSnapshotRow.open_positions),
            col(PortfolioSnapshotRow.stale_count),
        )
        .join(AgentRow, col(AgentRow.id) == col(PortfolioSnapshotRow.agent_id))
        .where(col(PortfolioSnapshotRow.cohort_id) == cohort_id)
    )
    return read_frame(connection, query).sort("agent", "marked_at")


def resolutions(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Resolutions of every market the cohort offered in a round or traded."""
    query = (
        select(
            col(ResolutionRow.market_id),
            QUESTION,
            col(ResolutionRow.kind),
            col(ResolutionRow.payouts_json),
            col(ResolutionRow.resolved_at),
            col(ResolutionRow.detected_at),
            col(ResolutionRow.source),
            col(ResolutionRow.override_note),
        )
        .join(MarketRow, col(MarketRow.id) == col(ResolutionRow.market_id))
        .where(col(ResolutionRow.market_id).in_(cohort_market_ids(cohort_id)))
    )
    return read_frame(connection, query).sort("market_id")
