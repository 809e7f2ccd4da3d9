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

from agents.baselines import BASELINE_KINDS
from arena.db.columnar import read_frame
from arena.db.read_tables import agent as agent_table
from arena.db.read_tables import (
    decision,
    fill,
    llm_request,
    market,
    portfolio_snapshot,
    position,
    resolution,
    round_,
    tool_call,
)
from arena.reports.catalog import cohort_market_ids

AGENT: Label[str] = agent_table.c.name.label("agent")
QUESTION: Label[str] = market.c.question.label("question")
DECISION_STATUSES = ("done", "rejected", "error", "missed", "claimed")


def agents(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """The cohort's seats: id, name, kind, model, whether it is a baseline, settings (JSON text)."""
    query = select(
        agent_table.c.id.label("agent_id"),
        agent_table.c.cohort_id,
        AGENT,
        agent_table.c.kind,
        agent_table.c.model_id,
        agent_table.c.settings_json,
        agent_table.c.created_at,
    ).where(agent_table.c.cohort_id == cohort_id)
    frame = read_frame(connection, query).sort("agent")
    return frame.with_columns(baseline=pl.col("kind").is_in(sorted(BASELINE_KINDS))).select(
        "agent_id", "cohort_id", "agent", "kind", "baseline", "model_id", "settings_json", "created_at"
    )


def rounds(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """One row per round with how its decisions ended (done, rejected, error, missed, still claimed)."""
    query: Select[*tuple[Any, ...]] = select(
        round_.c.id.label("round_id"),
        round_.c.round_index,
        round_.c.scheduled_at,
        round_.c.status,
        round_.c.market_count,
        round_.c.snapshot_hash,
        round_.c.started_at,
        round_.c.finished_at,
    ).where(round_.c.cohort_id == cohort_id)
    table = read_frame(connection, query)
    outcomes = read_frame(
        connection,
        select(decision.c.round_id, decision.c.status).where(decision.c.cohort_id == cohort_id),
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
        decision.c.id.label("decision_id"),
        round_.c.round_index,
        round_.c.scheduled_at,
        AGENT,
        decision.c.status,
        decision.c.error_kind,
        decision.c.error,
        decision.c.reasoning,
        decision.c.actions_json,
        decision.c.probabilities_json,
        decision.c.cash_at_start,
        decision.c.max_bet,
        decision.c.prompt_tokens,
        decision.c.completion_tokens,
        decision.c.cost_usd,
        decision.c.latency_s,
        decision.c.attempts,
        decision.c.prompt_version,
        decision.c.prompt_hash,
        decision.c.claimed_at,
        decision.c.decided_at,
    ]
    if prompts:
        columns += [decision.c.raw_prompt, decision.c.raw_response]
    query = _in_cohort(select(*columns), cohort_id)
    if agent is not None:
        query = query.where(agent_table.c.name == agent)
    return read_frame(connection, query).sort("round_index", "agent", "decision_id")


def _in_cohort(query: Select[*tuple[Any, ...]], cohort_id: str) -> Select[*tuple[Any, ...]]:
    """``query`` (over decisions, or rows joined to their decision) limited to the cohort, with
    each decision's round and agent joined for the ``round_index`` and ``agent`` columns."""
    return (
        query.join(round_, round_.c.id == decision.c.round_id)
        .join(agent_table, agent_table.c.id == decision.c.agent_id)
        .where(decision.c.cohort_id == cohort_id)
    )


def tool_calls(
    connection: Connection, cohort_id: str, *, texts: bool = True, agent: str | None = None
) -> pl.DataFrame:
    """Every research-tool call of the cohort's decisions (of ``agent``, or all), in call order:
    arguments and result as the text stored (NULL past the stored limit: sha256 and size then).
    Without ``texts`` (a report without prompts) only their sizes and digests are kept."""
    query: Select[*tuple[Any, ...]] = select(
        tool_call.c.decision_id,
        round_.c.round_index,
        AGENT,
        tool_call.c.seq,
        tool_call.c.step,
        tool_call.c.name.label("tool"),
        tool_call.c.is_error,
        tool_call.c.latency_s,
        tool_call.c.arguments,
        tool_call.c.arguments_chars,
        tool_call.c.arguments_sha256,
        tool_call.c.result,
        tool_call.c.result_chars,
        tool_call.c.result_sha256,
    ).join(decision, decision.c.id == tool_call.c.decision_id)
    query = _in_cohort(query, cohort_id)
    if agent is not None:
        query = query.where(agent_table.c.name == agent)
    frame = read_frame(connection, query).sort("round_index", "agent", "decision_id", "seq")
    return frame if texts else frame.drop("arguments", "result")


def llm_requests(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every provider request of the cohort's decisions: the per-request rows whose sums are the
    decision's tokens, cost and attempts."""
    query: Select[*tuple[Any, ...]] = select(
        llm_request.c.decision_id,
        round_.c.round_index,
        AGENT,
        llm_request.c.seq,
        llm_request.c.outcome,
        llm_request.c.prompt_tokens,
        llm_request.c.completion_tokens,
        llm_request.c.cost_usd,
        llm_request.c.latency_s,
    ).join(decision, decision.c.id == llm_request.c.decision_id)
    return read_frame(connection, _in_cohort(query, cohort_id)).sort(
        "round_index", "agent", "decision_id", "seq"
    )


def fills(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every buy, sell and settlement of the cohort's agents, in the order they happened."""
    query: Select[*tuple[Any, ...]] = (
        select(
            fill.c.id.label("fill_id"),
            fill.c.filled_at,
            AGENT,
            fill.c.kind,
            fill.c.market_id,
            QUESTION,
            fill.c.outcome,
            fill.c.position_id,
            fill.c.amount,
            fill.c.price,
            fill.c.shares,
            fill.c.fee,
            fill.c.realized_pnl,
            fill.c.max_bet,
            fill.c.decision_id,
            fill.c.leg_index,
        )
        .join(agent_table, agent_table.c.id == fill.c.agent_id)
        .join(market, market.c.id == fill.c.market_id)
        .where(agent_table.c.cohort_id == cohort_id)
    )
    return read_frame(connection, query).sort("filled_at", "fill_id")


def positions(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Every position (open, closed, settled) with its last mark and its market's resolution."""
    query = (
        select(
            AGENT,
            position.c.position_id,
            position.c.market_id,
            QUESTION,
            position.c.outcome,
            position.c.status,
            position.c.shares,
            position.c.cost_basis,
            position.c.realized_pnl,
            position.c.last_price,
            position.c.last_marked_at,
            position.c.stale,
            position.c.opened_at,
            position.c.closed_at,
            resolution.c.kind.label("resolution"),
            resolution.c.resolved_at,
        )
        .join(agent_table, agent_table.c.id == position.c.agent_id)
        .join(market, market.c.id == position.c.market_id)
        .outerjoin(resolution, resolution.c.market_id == position.c.market_id)
        .where(agent_table.c.cohort_id == cohort_id)
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
            portfolio_snapshot.c.marked_at,
            portfolio_snapshot.c.cash,
            portfolio_snapshot.c.positions_value,
            portfolio_snapshot.c.total_value,
            portfolio_snapshot.c.realized_pnl,
            portfolio_snapshot.c.unrealized_pnl,
            portfolio_snapshot.c.open_positions,
            portfolio_snapshot.c.stale_count,
        )
        .join(agent_table, agent_table.c.id == portfolio_snapshot.c.agent_id)
        .where(portfolio_snapshot.c.cohort_id == cohort_id)
    )
    return read_frame(connection, query).sort("agent", "marked_at")


def resolutions(connection: Connection, cohort_id: str) -> pl.DataFrame:
    """Resolutions of every market the cohort offered in a round or traded."""
    query = (
        select(
            resolution.c.market_id,
            QUESTION,
            resolution.c.kind,
            resolution.c.payouts_json,
            resolution.c.resolved_at,
            resolution.c.detected_at,
            resolution.c.source,
            resolution.c.override_note,
        )
        .join(market, market.c.id == resolution.c.market_id)
        .where(resolution.c.market_id.in_(cohort_market_ids(cohort_id)))
    )
    return read_frame(connection, query).sort("market_id")
