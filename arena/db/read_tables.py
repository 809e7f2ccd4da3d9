"""The columns readers select, as light Core table clauses: readers need neither the ORM nor the models.

Why beside ``arena.db.models``: importing the models builds twenty SQLModel classes (pydantic
fields, SQLAlchemy mappers) and loads the ORM and the PostgreSQL dialect, about half a second of
CPU, which a reader that only selects columns need not pay (a cold ``arena leaderboard``, the
dashboard's first page). So the scoring loaders (``arena.scoring.load``), the catalog and the
log tables (``arena.reports``) select from these clauses, as ``arena.db.revision`` does for
Alembic's table. Each clause names only the columns read, with the types the models give them,
so values come back the same (exact ``Decimal``, aware UTC ``datetime``, parsed JSON);
``tests/db/test_read_tables.py`` checks every column against ``arena.db.models``, so a renamed
or retyped column fails there, not in a leaderboard.

JSON columns are plain ``JSON`` here, not the models' JSONB variant: reading needs no variant
(psycopg hands JSON and JSONB values over already parsed), and naming JSONB would load the
PostgreSQL dialect for a SQLite reader.
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Date, Float, Integer, String, Text, column, table

from arena.db.types import Money, Price, Shares, UTCDateTime

cohort = table(
    "cohort",
    column("id", String),
    column("name", String),
    column("mode", String),
    column("status", String),
    column("seed", Integer),
    column("config_json", JSON),
    column("config_hash", String),
    column("created_at", UTCDateTime),
    column("started_at", UTCDateTime),
    column("finished_at", UTCDateTime),
)

agent = table(
    "agent",
    column("id", Integer),
    column("cohort_id", String),
    column("name", String),
    column("kind", String),
    column("settings_json", JSON),
    column("model_id", String),
    column("created_at", UTCDateTime),
)

market = table(
    "market",
    column("id", String),
    column("venue", String),
    column("question", Text),
    column("description", Text),
    column("category", String),
    column("outcomes_json", JSON),
    column("close_time", UTCDateTime),
    column("volume", Money()),
    column("url", String),
)

market_snapshot = table(
    "market_snapshot",
    column("id", Integer),
    column("market_id", String),
    column("source", String),
    column("observed_at", UTCDateTime),
    column("prices_json", JSON),
)

resolution = table(
    "resolution",
    column("id", Integer),
    column("market_id", String),
    column("kind", String),
    column("payouts_json", JSON),
    column("resolved_at", UTCDateTime),
    column("detected_at", UTCDateTime),
    column("source", String),
    column("override_note", Text),
)

round_ = table(
    "round",
    column("id", Integer),
    column("cohort_id", String),
    column("status", String),
    column("scheduled_at", UTCDateTime),
    column("round_index", Integer),
    column("market_count", Integer),
    column("snapshot_hash", String),
    column("started_at", UTCDateTime),
    column("finished_at", UTCDateTime),
)

round_market = table(
    "round_market",
    column("id", Integer),
    column("round_id", Integer),
    column("market_id", String),
    column("observed_at", UTCDateTime),
    column("prices_json", JSON),
)

decision = table(
    "decision",
    column("id", Integer),
    column("round_id", Integer),
    column("agent_id", Integer),
    column("cohort_id", String),
    column("decided_at", UTCDateTime),
    column("error", Text),
    column("error_kind", String),
    column("prompt_tokens", Integer),
    column("completion_tokens", Integer),
    column("cost_usd", Price()),
    column("latency_s", Float),
    column("probabilities_json", JSON),
    column("cash_at_start", Money()),
    column("status", String),
    column("reasoning", Text),
    column("actions_json", JSON),
    column("max_bet", Money()),
    column("attempts", Integer),
    column("prompt_version", String),
    column("prompt_hash", String),
    column("claimed_at", UTCDateTime),
    column("raw_prompt", Text),
    column("raw_response", Text),
)

llm_charge = table(
    "llm_charge",
    column("decision_id", Integer),
    column("cost_usd", Price()),
)

fill = table(
    "fill",
    column("id", Integer),
    column("decision_id", Integer),
    column("agent_id", Integer),
    column("market_id", String),
    column("outcome", String),
    column("kind", String),
    column("amount", Money()),
    column("price", Price()),
    column("shares", Shares()),
    column("max_bet", Money()),
    column("realized_pnl", Money()),
    column("filled_at", UTCDateTime),
    column("position_id", String),
    column("fee", Money()),
    column("leg_index", Integer),
)

external_forecast = table(
    "external_forecast",
    column("id", Integer),
    column("agent_id", Integer),
    column("cohort_id", String),
    column("market_id", String),
    column("outcome", String),
    column("p", Float),
    column("stated_at", UTCDateTime),
)

portfolio_snapshot = table(
    "portfolio_snapshot",
    column("id", Integer),
    column("agent_id", Integer),
    column("cohort_id", String),
    column("marked_at", UTCDateTime),
    column("cash", Money()),
    column("total_value", Money()),
    column("realized_pnl", Money()),
    column("unrealized_pnl", Money()),
    column("positions_value", Money()),
    column("open_positions", Integer),
    column("stale_count", Integer),
)

portfolio_close = table(
    "portfolio_close",
    column("agent_id", Integer),
    column("cohort_id", String),
    column("day", Date),
    column("closed_at", UTCDateTime),
)

tool_call = table(
    "tool_call",
    column("decision_id", Integer),
    column("seq", Integer),
    column("step", Integer),
    column("name", String),
    column("is_error", Boolean),
    column("latency_s", Float),
    column("arguments", Text),
    column("arguments_chars", Integer),
    column("arguments_sha256", String),
    column("result", Text),
    column("result_chars", Integer),
    column("result_sha256", String),
)

llm_request = table(
    "llm_request",
    column("decision_id", Integer),
    column("seq", Integer),
    column("outcome", String),
    column("prompt_tokens", Integer),
    column("completion_tokens", Integer),
    column("cost_usd", Price()),
    column("latency_s", Float),
)

position = table(
    "position",
    column("position_id", String),
    column("market_id", String),
    column("outcome", String),
    column("status", String),
    column("shares", Shares()),
    column("cost_basis", Money()),
    column("realized_pnl", Money()),
    column("last_price", Price()),
    column("last_marked_at", UTCDateTime),
    column("stale", Boolean),
    column("opened_at", UTCDateTime),
    column("closed_at", UTCDateTime),
    column("agent_id", Integer),
)

TABLES = (
    cohort,
    agent,
    market,
    market_snapshot,
    resolution,
    round_,
    round_market,
    decision,
    fill,
    external_forecast,
    portfolio_snapshot,
    portfolio_close,
    position,
    tool_call,
    llm_request,
)
