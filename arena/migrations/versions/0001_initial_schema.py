"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 13:36:22.766687
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _exact(scale: int) -> sa.types.TypeEngine[Any]:
    """arena.db.types.ExactDecimal: NUMERIC(18, scale) on PostgreSQL, scaled 64-bit integers on SQLite."""
    return sa.BigInteger().with_variant(sa.Numeric(18, scale), "postgresql")


def _json() -> sa.types.TypeEngine[Any]:
    """arena.db.types.JSONDoc: JSON text on SQLite, JSONB on PostgreSQL."""
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "cohort",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("mode", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("config_json", _json(), nullable=False),
        sa.Column("config_hash", sa.String(), nullable=False),
        sa.Column("arena_version", sa.String(), nullable=True),
        sa.Column("git_commit", sa.String(), nullable=True),
        sa.Column("excluded_markets", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.CheckConstraint("mode IN ('live', 'replay')", name=op.f("ck_cohort_mode")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cohort")),
    )
    op.create_table(
        "job_run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job", sa.String(), nullable=False),
        sa.Column("scope", sa.String(), nullable=True),
        sa.Column("bucket", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ok", sa.Boolean(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("details_json", _json(), nullable=True),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_run")),
        sa.UniqueConstraint("job", "bucket", name=op.f("uq_job_run_job_bucket")),
    )
    op.create_table(
        "scheduler_lease",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_scheduler_lease")),
    )
    op.create_index(op.f("ix_job_run_job_started_at"), "job_run", ["job", "started_at"], unique=False)

    op.create_table(
        "market",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("venue", sa.String(), nullable=False),
        sa.Column("venue_id", sa.String(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("outcomes_json", _json(), nullable=False),
        sa.Column("open_time", sa.DateTime(timezone=True), nullable=True),
        sa.Column("close_time", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolution_time", sa.DateTime(timezone=True), nullable=True),
        sa.Column("category", sa.String(), nullable=True),
        sa.Column("volume", _exact(6), nullable=True),
        sa.Column("liquidity", _exact(6), nullable=True),
        sa.Column("url", sa.String(), nullable=True),
        sa.Column("token_ids_json", _json(), nullable=False),
        sa.Column("raw_json", _json(), nullable=True),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market")),
        sa.UniqueConstraint("venue", "venue_id", name=op.f("uq_market_venue_venue_id")),
    )
    op.create_table(
        "agent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("model_id", sa.String(), nullable=True),
        sa.Column("settings_json", _json(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["cohort_id"],
            ["cohort.id"],
            name=op.f("fk_agent_cohort_id_cohort"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent")),
        sa.UniqueConstraint("cohort_id", "name", name=op.f("uq_agent_cohort_id_name")),
        sa.UniqueConstraint("id", "cohort_id", name=op.f("uq_agent_id_cohort_id")),
    )
    op.create_table(
        "market_snapshot",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prices_json", _json(), nullable=False),
        sa.Column("bids_json", _json(), nullable=False),
        sa.Column("asks_json", _json(), nullable=False),
        sa.Column("raw_json", _json(), nullable=True),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["market.id"],
            name=op.f("fk_market_snapshot_market_id_market"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_market_snapshot")),
        sa.UniqueConstraint(
            "market_id", "source", "observed_at", name=op.f("uq_market_snapshot_market_id_source_observed_at")
        ),
    )
    op.create_index(
        op.f("ix_market_snapshot_market_id_observed_at"),
        "market_snapshot",
        ["market_id", "observed_at"],
        unique=False,
    )

    op.create_table(
        "resolution",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("payouts_json", _json(), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("override_note", sa.Text(), nullable=True),
        sa.Column("raw_json", _json(), nullable=True),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "kind IN ('YES', 'NO', 'VOID', '5050', 'OUTCOME')", name=op.f("ck_resolution_kind")
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["market.id"],
            name=op.f("fk_resolution_market_id_market"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_resolution")),
        sa.UniqueConstraint("market_id", name=op.f("uq_resolution_market_id")),
    )
    op.create_table(
        "round",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.String(), nullable=False),
        sa.Column("round_index", sa.Integer(), nullable=False),
        sa.Column("scheduled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("snapshot_hash", sa.String(), nullable=True),
        sa.Column("market_count", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["cohort_id"],
            ["cohort.id"],
            name=op.f("fk_round_cohort_id_cohort"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_round")),
        sa.UniqueConstraint("cohort_id", "round_index", name=op.f("uq_round_cohort_id_round_index")),
        sa.UniqueConstraint("id", "cohort_id", name=op.f("uq_round_id_cohort_id")),
    )
    op.create_table(
        "decision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.String(), nullable=False),
        sa.Column("claim_token", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("raw_prompt", sa.Text(), nullable=True),
        sa.Column("raw_response", sa.Text(), nullable=True),
        sa.Column("actions_json", _json(), nullable=False),
        sa.Column("probabilities_json", _json(), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("error_kind", sa.String(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", _exact(10), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("prompt_hash", sa.String(), nullable=True),
        sa.Column("prompt_version", sa.String(), nullable=True),
        sa.Column("cash_at_start", _exact(6), nullable=True),
        sa.Column("max_bet", _exact(6), nullable=True),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["agent_id", "cohort_id"],
            ["agent.id", "agent.cohort_id"],
            name=op.f("fk_decision_agent_id_cohort_id_agent"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["round_id", "cohort_id"],
            ["round.id", "round.cohort_id"],
            name=op.f("fk_decision_round_id_cohort_id_round"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decision")),
        sa.UniqueConstraint("id", "agent_id", name=op.f("uq_decision_id_agent_id")),
        sa.UniqueConstraint("round_id", "agent_id", name=op.f("uq_decision_round_id_agent_id")),
    )
    op.create_table(
        "portfolio_snapshot",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.String(), nullable=False),
        sa.Column("marked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("cash", _exact(6), nullable=False),
        sa.Column("positions_value", _exact(6), nullable=False),
        sa.Column("total_value", _exact(6), nullable=False),
        sa.Column("realized_pnl", _exact(6), nullable=False),
        sa.Column("unrealized_pnl", _exact(6), nullable=False),
        sa.Column("open_positions", sa.Integer(), nullable=False),
        sa.Column("stale_count", sa.Integer(), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["agent_id", "cohort_id"],
            ["agent.id", "agent.cohort_id"],
            name=op.f("fk_portfolio_snapshot_agent_id_cohort_id_agent"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_portfolio_snapshot")),
        sa.UniqueConstraint("agent_id", "marked_at", name=op.f("uq_portfolio_snapshot_agent_id_marked_at")),
    )
    op.create_index(
        op.f("ix_portfolio_snapshot_cohort_id_marked_at"),
        "portfolio_snapshot",
        ["cohort_id", "marked_at"],
        unique=False,
    )

    op.create_table(
        "position",
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("position_id", sa.String(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("shares", _exact(6), nullable=False),
        sa.Column("cost_basis", _exact(6), nullable=False),
        sa.Column("realized_pnl", _exact(6), nullable=False),
        sa.Column("last_price", _exact(10), nullable=True),
        sa.Column("last_marked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stale", sa.Boolean(), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.CheckConstraint("status IN ('open', 'closed', 'settled')", name=op.f("ck_position_status")),
        sa.CheckConstraint("shares >= 0", name=op.f("ck_position_shares_not_negative")),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agent.id"],
            name=op.f("fk_position_agent_id_agent"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["market.id"],
            name=op.f("fk_position_market_id_market"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("agent_id", "position_id", name=op.f("pk_position")),
        sa.UniqueConstraint(
            "agent_id",
            "position_id",
            "market_id",
            "outcome",
            name=op.f("uq_position_agent_id_position_id_market_id_outcome"),
        ),
    )
    op.create_index(
        "uq_position_open_agent_market_outcome",
        "position",
        ["agent_id", "market_id", "outcome"],
        unique=True,
        sqlite_where=sa.text("status = 'open'"),
        postgresql_where=sa.text("status = 'open'"),
    )

    op.create_table(
        "round_market",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prices_json", _json(), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["market.id"],
            name=op.f("fk_round_market_market_id_market"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["round_id"],
            ["round.id"],
            name=op.f("fk_round_market_round_id_round"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_round_market")),
        sa.UniqueConstraint("round_id", "market_id", name=op.f("uq_round_market_round_id_market_id")),
    )
    op.create_table(
        "fill",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.Integer(), nullable=True),
        sa.Column("leg_index", sa.Integer(), nullable=True),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("market_id", sa.String(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("position_id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("amount", _exact(6), nullable=False),
        sa.Column("price", _exact(10), nullable=True),
        sa.Column("shares", _exact(6), nullable=False),
        sa.Column("fee", _exact(6), nullable=False),
        sa.Column("realized_pnl", _exact(6), nullable=True),
        sa.Column("max_bet", _exact(6), nullable=True),
        sa.Column("filled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "recorded_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("CURRENT_TIMESTAMP"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "(kind = 'settle' AND decision_id IS NULL AND leg_index IS NULL) OR (kind <> 'settle' AND decision_id IS NOT NULL AND leg_index IS NOT NULL AND price IS NOT NULL)",
            name=op.f("ck_fill_kind_fields"),
        ),
        sa.CheckConstraint("kind IN ('buy', 'sell', 'settle')", name=op.f("ck_fill_kind")),
        sa.CheckConstraint("amount >= 0 AND shares >= 0 AND fee >= 0", name=op.f("ck_fill_not_negative")),
        sa.ForeignKeyConstraint(
            ["agent_id", "position_id", "market_id", "outcome"],
            ["position.agent_id", "position.position_id", "position.market_id", "position.outcome"],
            name=op.f("fk_fill_agent_id_position_id_market_id_outcome_position"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agent.id"],
            name=op.f("fk_fill_agent_id_agent"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["decision_id", "agent_id"],
            ["decision.id", "decision.agent_id"],
            name=op.f("fk_fill_decision_id_agent_id_decision"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.ForeignKeyConstraint(
            ["market_id"],
            ["market.id"],
            name=op.f("fk_fill_market_id_market"),
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fill")),
        sa.UniqueConstraint("decision_id", "leg_index", name=op.f("uq_fill_decision_id_leg_index")),
    )
    op.create_index(op.f("ix_fill_agent_id_filled_at"), "fill", ["agent_id", "filled_at"], unique=False)
    op.create_index(op.f("ix_fill_market_id"), "fill", ["market_id"], unique=False)
    op.create_index(
        "uq_fill_settle_agent_position",
        "fill",
        ["agent_id", "position_id"],
        unique=True,
        sqlite_where=sa.text("kind = 'settle'"),
        postgresql_where=sa.text("kind = 'settle'"),
    )


def downgrade() -> None:
    op.drop_table("fill")
    op.drop_table("round_market")
    op.drop_table("position")
    op.drop_table("portfolio_snapshot")
    op.drop_table("decision")
    op.drop_table("round")
    op.drop_table("resolution")
    op.drop_table("market_snapshot")
    op.drop_table("agent")
    op.drop_table("market")
    op.drop_table("scheduler_lease")
    op.drop_table("job_run")
    op.drop_table("cohort")
