"""The arena's tables: the stored log of cohorts, markets, rounds, decisions, fills and marks.

Conventions every table follows:

- Money and shares are ``Decimal`` exact to 1e-6, prices exact to 1e-10 (``arena.db.types``);
  a value with more places is refused, so quantize in the domain before storing.
- Datetimes are aware UTC. Each event row has its event time from the injected ``Clock``
  (simulated in replay: ``observed_at``, ``filled_at``, ``marked_at``...) and ``recorded_at``,
  stamped by the database itself (``CURRENT_TIMESTAMP``, UTC) when the row is written.
- JSON columns hold plain JSON; Decimals inside them are strings (``decimals_to_json``).
  Assign a new dict/list to change one: in-place edits are not tracked.
- Idempotency lives in unique constraints from day one (one decision per round and agent, one
  fill per decision leg, one settlement per position...), and cross-table consistency in
  composite foreign keys (a decision's round and agent belong to the same cohort).

Status values are plain strings owned by the code that writes them; the few fixed vocabularies
(``cohort.mode``, ``fill.kind``, ``position.status``, ``resolution.kind``) are checked.
The schema stays in this one module (past the usual size) on purpose: the composite keys tie
the tables together, and the migrations mirror it table for table.

Unlike the other modules, this one evaluates its annotations (no ``from __future__ import
annotations``): pydantic and SQLAlchemy each read every field's type when a table class is built,
and as strings they would each evaluate all 226 of them again on every start (about 15 ms).
"""

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    DDL,
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    MetaData,
    Text,
    UniqueConstraint,
    event,
    text,
)
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel
from sqlmodel._compat import SQLModelConfig  # the type of model_config; sqlmodel exports no alias

from arena.db.types import JSONDoc, Money, Price, Shares, UTCDateTime

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING_CONVENTION)


class ArenaTable(SQLModel, registry=registry(metadata=metadata)):
    """Base of the arena's tables: a metadata of its own, with deterministic constraint names."""

    # The validators are built on first use, not at import: every command imports the models,
    # most never validate a row through them (``arena leaderboard`` starts ~20 ms sooner).
    model_config = SQLModelConfig(defer_build=True)


def _ref(target: str, **field: Any) -> Any:
    """A foreign key checked at commit, so rows of one unit of work may be added in any order
    (without relationship() links the ORM does not order a flush's inserts by foreign keys)."""
    return Field(sa_column_args=[ForeignKey(target, deferrable=True, initially="DEFERRED")], **field)


def _fkc(columns: list[str], targets: list[str]) -> ForeignKeyConstraint:
    """A composite foreign key, deferred like ``_ref``."""
    return ForeignKeyConstraint(columns, targets, deferrable=True, initially="DEFERRED")


def _at(*, nullable: bool = False) -> Any:
    """An aware-UTC event time, set by the writer from its Clock (never defaulted here)."""
    return Field(default=None, sa_type=UTCDateTime(), nullable=nullable)


def _recorded_at() -> Any:
    """When the row was written, stamped by the database so no Python wall clock is read."""
    return Field(
        default=None,
        sa_type=UTCDateTime(),
        nullable=False,
        sa_column_kwargs={"server_default": text("CURRENT_TIMESTAMP")},
    )


def _json(factory: Callable[[], Any] | None) -> Any:
    """A JSON column; required with ``factory`` as its empty value, or nullable without one."""
    if factory is None:
        return Field(default=None, sa_type=JSONDoc(), nullable=True)
    return Field(default_factory=factory, sa_type=JSONDoc(), nullable=False)


class CohortRow(ArenaTable, table=True):
    """A competition: agents, rules and schedule frozen in ``config_json`` (hash in ``config_hash``).

    ``id`` is chosen by the launcher (a deterministic key makes launching idempotent); ``status``
    is owned by the cohort lifecycle (e.g. running, paused, completed, cancelled).
    """

    __tablename__ = "cohort"
    __table_args__ = (CheckConstraint("mode IN ('live', 'replay')", name="mode"),)

    id: str = Field(primary_key=True)
    name: str
    mode: str
    status: str
    seed: int = 0
    config_json: dict[str, Any] = _json(dict)
    config_hash: str
    arena_version: str | None = None
    git_commit: str | None = None
    # Markets the leakage guard removed (resolved before an LLM agent's knowledge cutoff).
    excluded_markets: int = 0
    created_at: datetime = _at()
    started_at: datetime | None = _at(nullable=True)
    finished_at: datetime | None = _at(nullable=True)
    recorded_at: datetime = _recorded_at()


class AgentRow(ArenaTable, table=True):
    """One bettor in one cohort; frozen with the cohort (kind: llm | baseline | plugin | ...)."""

    __tablename__ = "agent"
    __table_args__ = (
        UniqueConstraint("cohort_id", "name"),
        UniqueConstraint("id", "cohort_id"),  # target of composite FKs that pin rows to the cohort
    )

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: str = _ref("cohort.id")
    name: str
    kind: str
    model_id: str | None = None
    settings_json: dict[str, Any] = _json(dict)
    created_at: datetime = _at()
    recorded_at: datetime = _recorded_at()


class MarketRow(ArenaTable, table=True):
    """A venue's market, upserted by sync on ``id`` = ``venue:venue_id`` (``markets.types.market_key``)."""

    __tablename__ = "market"
    __table_args__ = (UniqueConstraint("venue", "venue_id"),)

    id: str = Field(primary_key=True)
    venue: str
    venue_id: str
    question: str = Field(sa_type=Text)
    description: str = Field(default="", sa_type=Text)
    outcomes_json: list[str] = _json(list)
    open_time: datetime | None = _at(nullable=True)
    close_time: datetime | None = _at(nullable=True)
    resolution_time: datetime | None = _at(nullable=True)
    category: str | None = None
    volume: Decimal | None = Field(default=None, sa_type=Money())
    liquidity: Decimal | None = Field(default=None, sa_type=Money())
    url: str | None = None
    token_ids_json: dict[str, str] = _json(dict)
    raw_json: Any = _json(None)
    first_seen_at: datetime = _at()
    updated_at: datetime = _at()
    recorded_at: datetime = _recorded_at()
    # Digest of the venue answers the last sync built this market from (``arena.sync.unchanged``).
    sync_stamp: str | None = None
    # The venue's own state of the market at its last sync, in words: "trading", why its outcome
    # is not final yet (e.g. "closed; UMA status 'disputed' is not final"), or "resolved ...".
    venue_status: str | None = Field(default=None, sa_type=Text)


class MarketSnapshotRow(ArenaTable, table=True):
    """Per-outcome prices of a market seen at ``observed_at`` from ``source`` (provenance kept)."""

    __tablename__ = "market_snapshot"
    __table_args__ = (
        UniqueConstraint("market_id", "source", "observed_at"),
        Index(None, "market_id", "observed_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = _ref("market.id")
    source: str
    observed_at: datetime = _at()
    prices_json: dict[str, str] = _json(dict)
    bids_json: dict[str, str] = _json(dict)
    asks_json: dict[str, str] = _json(dict)
    raw_json: Any = _json(None)
    recorded_at: datetime = _recorded_at()


class ResolutionRow(ArenaTable, table=True):
    """How a market ended (payouts per share per outcome); at most one per market.

    ``resolved_at`` is when the venue resolved it, ``detected_at`` when the arena learned it
    (clock time), ``override_note`` says who/why when set by hand. For a resolution set by hand,
    ``venue_answer_json`` holds the venue's own final answer once a sync sees it (``kind``,
    ``payouts``, ``resolved_at``, ``seen_at``): the override stays, and a disagreement is reported.
    """

    __tablename__ = "resolution"
    __table_args__ = (CheckConstraint("kind IN ('YES', 'NO', 'VOID', '5050', 'OUTCOME')", name="kind"),)

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = _ref("market.id", unique=True)
    kind: str
    payouts_json: dict[str, str] = _json(dict)
    resolved_at: datetime = _at()
    detected_at: datetime = _at()
    source: str = ""
    override_note: str | None = Field(default=None, sa_type=Text)
    raw_json: Any = _json(None)
    recorded_at: datetime = _recorded_at()
    venue_answer_json: Any = _json(None)


class RoundRow(ArenaTable, table=True):
    """Round ``round_index`` of a cohort, run on the snapshot as of ``scheduled_at`` (hash kept).

    ``note`` says why a round ended without asking anyone (status ``empty``: nothing to trade).
    """

    __tablename__ = "round"
    __table_args__ = (
        UniqueConstraint("cohort_id", "round_index"),
        UniqueConstraint("id", "cohort_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    cohort_id: str = _ref("cohort.id")
    round_index: int
    scheduled_at: datetime = _at()
    status: str
    snapshot_hash: str | None = None
    market_count: int | None = None
    started_at: datetime | None = _at(nullable=True)
    finished_at: datetime | None = _at(nullable=True)
    recorded_at: datetime = _recorded_at()
    note: str | None = Field(default=None, sa_type=Text)


class RoundMarketRow(ArenaTable, table=True):
    """One market of a round's snapshot, with the prices every agent saw (rebuilds the hash)."""

    __tablename__ = "round_market"
    __table_args__ = (UniqueConstraint("round_id", "market_id"),)

    id: int | None = Field(default=None, primary_key=True)
    round_id: int = _ref("round.id")
    market_id: str = _ref("market.id")
    source: str
    observed_at: datetime = _at()
    prices_json: dict[str, str] = _json(dict)
    recorded_at: datetime = _recorded_at()


class DecisionRow(ArenaTable, table=True):
    """An agent's answer in a round, claimed before any I/O under ``claim_token`` (a fencing token).

    Raw prompt and response are kept beside the parsed actions/probabilities. Status is owned by
    the round runner (e.g. claimed | done | error).
    """

    __tablename__ = "decision"
    __table_args__ = (
        UniqueConstraint("round_id", "agent_id"),
        UniqueConstraint("id", "agent_id"),
        _fkc(["round_id", "cohort_id"], ["round.id", "round.cohort_id"]),
        _fkc(["agent_id", "cohort_id"], ["agent.id", "agent.cohort_id"]),
    )

    id: int | None = Field(default=None, primary_key=True)
    round_id: int
    agent_id: int
    cohort_id: str
    claim_token: str
    status: str
    # Wall-clock start of the claim's lease (process liveness), even in a replay's simulated time.
    claimed_at: datetime = _at()
    decided_at: datetime | None = _at(nullable=True)
    raw_prompt: str | None = Field(default=None, sa_type=Text)
    raw_response: str | None = Field(default=None, sa_type=Text)
    actions_json: list[dict[str, Any]] = _json(list)
    probabilities_json: dict[str, Any] = _json(dict)
    reasoning: str = Field(default="", sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)
    error_kind: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Decimal = Field(default=Decimal(0), sa_type=Price())
    latency_s: float = 0.0
    attempts: int = 0
    prompt_hash: str | None = None
    prompt_version: str | None = None
    cash_at_start: Decimal | None = Field(default=None, sa_type=Money())
    max_bet: Decimal | None = Field(default=None, sa_type=Money())
    recorded_at: datetime = _recorded_at()


class ExternalForecastRow(ArenaTable, table=True):
    """A probability stated outside the arena's rounds by an external forecaster (``agents.external``).

    Imported with its own time (``stated_at``): it stands from then like a statement of a decision
    and is scored by the same rules. ``source`` names the file (or forecast set) it came from.
    One row per (agent, market, outcome, time).
    """

    __tablename__ = "external_forecast"
    __table_args__ = (
        UniqueConstraint("agent_id", "market_id", "outcome", "stated_at"),
        _fkc(["agent_id", "cohort_id"], ["agent.id", "agent.cohort_id"]),
        Index(None, "cohort_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    agent_id: int
    cohort_id: str
    market_id: str = _ref("market.id")
    outcome: str
    p: float
    stated_at: datetime = _at()
    source: str
    recorded_at: datetime = _recorded_at()


class ToolCallRow(ArenaTable, table=True):
    """One research-tool call made during a decision (``arena/tools``), in the order made.

    Arguments and results are kept as text up to ``agents.tools.STORED_CHARS``; longer ones only
    by sha256 and size (the text is then NULL), so a model that sends megabytes cannot bloat the
    log. ``step`` is the provider request that asked for the call.
    """

    __tablename__ = "tool_call"
    __table_args__ = (_fkc(["decision_id", "agent_id"], ["decision.id", "decision.agent_id"]),)

    decision_id: int = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    agent_id: int
    step: int
    call_id: str
    name: str
    arguments: str | None = Field(default=None, sa_type=Text)
    arguments_sha256: str
    arguments_chars: int
    result: str | None = Field(default=None, sa_type=Text)
    result_sha256: str
    result_chars: int
    is_error: bool
    latency_s: float


class LLMRequestRow(ArenaTable, table=True):
    """Tokens, cost and latency of one provider request of a decision (the decision row holds
    their sums): a tool-using decision makes several, and each one is billed."""

    __tablename__ = "llm_request"
    __table_args__ = (_fkc(["decision_id", "agent_id"], ["decision.id", "decision.agent_id"]),)

    decision_id: int = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    agent_id: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: Decimal = Field(sa_type=Price())
    latency_s: float
    outcome: str


class LLMChargeRow(ArenaTable, table=True):
    """A provider request paid for under a decision's claim, recorded as soon as it answered.

    The decision's own commit moves its requests into ``llm_request`` and deletes their charges,
    so the rows left are requests no stored decision accounts for: an attempt whose worker died
    or whose claim was taken over, a decision given up on at its timeout. Spending caps count
    them (``engine.runtime.budgets``)."""

    __tablename__ = "llm_charge"
    __table_args__ = (_fkc(["decision_id", "agent_id"], ["decision.id", "decision.agent_id"]),)

    decision_id: int = Field(primary_key=True)
    claim_token: str = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    agent_id: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: Decimal = Field(sa_type=Price())
    latency_s: float
    outcome: str
    charged_at: datetime = _at()
    recorded_at: datetime = _recorded_at()


class PositionRow(ArenaTable, table=True):
    """A holding of one outcome, keyed by the ledger's ``position_id`` within its agent.

    Reopening after a full sell makes a new row: only one *open* row per (agent, market, outcome).
    On PostgreSQL its pages are filled to 70% (migration 0010), so a re-mark's new row version
    stays on its page.
    """

    __tablename__ = "position"
    __table_args__ = (
        CheckConstraint("status IN ('open', 'closed', 'settled')", name="status"),
        CheckConstraint("shares >= 0", name="shares_not_negative"),
        UniqueConstraint("agent_id", "position_id", "market_id", "outcome"),  # fills must agree with it
        Index(
            "uq_position_open_agent_market_outcome",
            "agent_id",
            "market_id",
            "outcome",
            unique=True,
            sqlite_where=text("status = 'open'"),
            postgresql_where=text("status = 'open'"),
        ),
    )

    agent_id: int = _ref("agent.id", primary_key=True)
    position_id: str = Field(primary_key=True)
    market_id: str = _ref("market.id")
    outcome: str
    status: str = "open"
    shares: Decimal = Field(sa_type=Shares())
    cost_basis: Decimal = Field(sa_type=Money())
    realized_pnl: Decimal = Field(default=Decimal(0), sa_type=Money())
    last_price: Decimal | None = Field(default=None, sa_type=Price())
    last_marked_at: datetime | None = _at(nullable=True)
    stale: bool = False
    opened_at: datetime = _at()
    closed_at: datetime | None = _at(nullable=True)
    updated_at: datetime = _at()
    recorded_at: datetime = _recorded_at()


class FillRow(ArenaTable, table=True):
    """One executed leg: a buy or sell of a decision, or the settlement of a position.

    ``amount`` is the cash moved (spent on a buy, received on a sell or settlement), ``shares``
    the shares moved, both non-negative. Settlements have no decision and no price when voided
    (the refund is the remaining cost basis); at most one settlement per position.
    """

    __tablename__ = "fill"
    __table_args__ = (
        UniqueConstraint("decision_id", "leg_index"),
        CheckConstraint("kind IN ('buy', 'sell', 'settle')", name="kind"),
        CheckConstraint(
            "(kind = 'settle' AND decision_id IS NULL AND leg_index IS NULL)"
            " OR (kind <> 'settle' AND decision_id IS NOT NULL AND leg_index IS NOT NULL"
            " AND price IS NOT NULL)",
            name="kind_fields",
        ),
        CheckConstraint("amount >= 0 AND shares >= 0 AND fee >= 0", name="not_negative"),
        _fkc(["decision_id", "agent_id"], ["decision.id", "decision.agent_id"]),
        _fkc(
            ["agent_id", "position_id", "market_id", "outcome"],
            ["position.agent_id", "position.position_id", "position.market_id", "position.outcome"],
        ),
        Index(
            "uq_fill_settle_agent_position",
            "agent_id",
            "position_id",
            unique=True,
            sqlite_where=text("kind = 'settle'"),
            postgresql_where=text("kind = 'settle'"),
        ),
        Index(None, "agent_id", "filled_at"),
        Index(None, "market_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    decision_id: int | None = None
    leg_index: int | None = None
    agent_id: int = _ref("agent.id")
    market_id: str = _ref("market.id")
    outcome: str
    position_id: str
    kind: str
    amount: Decimal = Field(sa_type=Money())
    price: Decimal | None = Field(default=None, sa_type=Price())
    shares: Decimal = Field(sa_type=Shares())
    fee: Decimal = Field(default=Decimal(0), sa_type=Money())
    realized_pnl: Decimal | None = Field(default=None, sa_type=Money())
    max_bet: Decimal | None = Field(default=None, sa_type=Money())
    filled_at: datetime = _at()
    recorded_at: datetime = _recorded_at()


class PortfolioSnapshotRow(ArenaTable, table=True):
    """An agent's portfolio marked at ``marked_at``, with P/L split into realized and unrealized."""

    __tablename__ = "portfolio_snapshot"
    __table_args__ = (
        UniqueConstraint("agent_id", "marked_at"),
        _fkc(["agent_id", "cohort_id"], ["agent.id", "agent.cohort_id"]),
        Index(None, "cohort_id", "marked_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    agent_id: int
    cohort_id: str
    marked_at: datetime = _at()
    cash: Decimal = Field(sa_type=Money())
    positions_value: Decimal = Field(sa_type=Money())
    total_value: Decimal = Field(sa_type=Money())
    realized_pnl: Decimal = Field(sa_type=Money())
    unrealized_pnl: Decimal = Field(sa_type=Money())
    open_positions: int = 0
    stale_count: int = 0  # positions valued at a carried-forward (stale) or cost price
    recorded_at: datetime = _recorded_at()


class PortfolioCloseRow(ArenaTable, table=True):
    """Which mark closed each agent's UTC day: the latest ``portfolio_snapshot`` of that day.

    Scoring reads portfolios at daily resolution; a live cohort marked every few seconds holds
    millions of snapshots, and picking each day's last one by a group-by over all of them took
    seconds. The writer of marks keeps this table current (``arena.engine.books.marks``), so readers
    join a few rows per agent and day instead. Derived data, hence no ``recorded_at``.
    """

    __tablename__ = "portfolio_close"
    __table_args__ = (
        _fkc(["agent_id", "cohort_id"], ["agent.id", "agent.cohort_id"]),
        _fkc(["agent_id", "closed_at"], ["portfolio_snapshot.agent_id", "portfolio_snapshot.marked_at"]),
        Index(None, "cohort_id", "day"),
    )

    agent_id: int = Field(primary_key=True)
    day: date = Field(primary_key=True)  # UTC calendar day
    cohort_id: str
    closed_at: datetime = _at()  # marked_at of the day's last snapshot


class JobRunRow(ArenaTable, table=True):
    """One run of a scheduled job (sync, round, mark, settle...), for the operator's audit trail."""

    __tablename__ = "job_run"
    __table_args__ = (Index(None, "job", "started_at"), UniqueConstraint("job", "bucket"))

    id: int | None = Field(default=None, primary_key=True)
    job: str
    scope: str | None = None  # e.g. the cohort id the run was for
    # Start of the scheduling period this run claimed: a second runner of the same period skips.
    bucket: datetime | None = _at(nullable=True)
    started_at: datetime = _at()
    finished_at: datetime | None = _at(nullable=True)
    ok: bool | None = None
    message: str = Field(default="", sa_type=Text)
    details_json: dict[str, Any] | None = _json(None)
    recorded_at: datetime = _recorded_at()


class SchedulerLeaseRow(ArenaTable, table=True):
    """Which ``arena serve`` process runs the scheduler, until when (renewed while it lives)."""

    __tablename__ = "scheduler_lease"

    name: str = Field(primary_key=True)
    owner: str
    expires_at: datetime = _at()
    recorded_at: datetime = _recorded_at()


UNFINISHED_UNITS = "state IN ('queued', 'running')"  # a unit a worker runs or will run


class WorkUnitRow(ArenaTable, table=True):
    """A unit of work queued for ``arena worker`` processes: a whole replay cohort, the marks,
    settlement or sync job of live cohorts that ``arena serve`` hands to workers, or one agent's
    decision in one round (``round_index``, ``agent_id``; at most one unit for each, ever).

    A worker takes a unit by writing a fresh ``lease_token`` (``SELECT … FOR UPDATE SKIP LOCKED``
    on PostgreSQL, so concurrent workers never wait on each other); it renews ``lease_expires_at``
    while it runs and may finish the unit only while the token is still its own (fencing).

    ``dedup_key`` names what the unit works on within its kind (the cohort id for a replay, marks
    or settlement; the venue for a sync, which serves every cohort on it): at most one unfinished
    unit per kind and key, so two processes queueing the same work at once make one unit.
    ``cohort_id`` is empty for a sync unit.
    """

    __tablename__ = "work_unit"
    __table_args__ = (
        CheckConstraint("kind IN ('replay', 'marks', 'settle', 'sync', 'decision')", name="kind"),
        UniqueConstraint("kind", "cohort_id", "round_index", "agent_id"),
        CheckConstraint("state IN ('queued', 'running', 'done', 'failed')", name="state"),
        Index(None, "state", "available_at"),
        Index(
            "uq_work_unit_unfinished_kind_key",
            "kind",
            "dedup_key",
            unique=True,
            sqlite_where=text(UNFINISHED_UNITS),
            postgresql_where=text(UNFINISHED_UNITS),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    kind: str
    cohort_id: str | None = _ref("cohort.id", default=None, index=True)
    state: str
    attempts: int = 0
    lease_owner: str | None = None
    lease_token: str | None = None
    lease_expires_at: datetime | None = _at(nullable=True)
    available_at: datetime = _at()
    enqueued_at: datetime = _at()
    started_at: datetime | None = _at(nullable=True)
    finished_at: datetime | None = _at(nullable=True)
    error: str | None = Field(default=None, sa_type=Text)
    recorded_at: datetime = _recorded_at()
    dedup_key: str  # added by migration 0007 (column order is compared with the migrations)
    round_index: int | None = None  # a decision unit's round and agent (added by 0008: last)
    agent_id: int | None = None


class WorkerRow(ArenaTable, table=True):
    """An ``arena worker`` process: its heartbeat and the unit it is running, for ``arena status``."""

    __tablename__ = "worker"

    name: str = Field(primary_key=True)
    host: str
    pid: int
    started_at: datetime = _at()
    heartbeat_at: datetime = _at()
    stopped_at: datetime | None = _at(nullable=True)
    unit_id: int | None = None
    units_done: int = 0
    recorded_at: datetime = _recorded_at()
    # The lease it runs units with (added by 0011: last): silent for longer, it is gone.
    lease_seconds: float | None = None


class ServeProcessRow(ArenaTable, table=True):
    """An ``arena serve`` process (leader or standby), its heartbeat, and the settings it runs
    with (job cadences, leader lease...): ``arena status`` shows cadences from here, as recorded."""

    __tablename__ = "serve_process"

    owner: str = Field(primary_key=True)  # its first lease owner token (host:pid#id)
    host: str
    pid: int
    started_at: datetime = _at()
    heartbeat_at: datetime = _at()
    stopped_at: datetime | None = _at(nullable=True)
    lease_seconds: float
    settings_json: dict[str, Any] = _json(dict)
    recorded_at: datetime = _recorded_at()


class CorpusRow(ArenaTable, table=True):
    """A named corpus of dated documents that research tools search (``arena corpus import``).

    ``dropped_json`` counts the documents the import left out, by the deny-list entry they
    matched and what named it (``metaculus.com (by its source)``); ``deny_list_json`` is the list
    that import applied, so a corpus says what it excludes.
    """

    __tablename__ = "corpus"
    __table_args__ = (UniqueConstraint("name"),)

    id: int | None = Field(default=None, primary_key=True)
    name: str
    source_file: str  # the imported file's name (no folders: a corpus may be shared)
    document_count: int = 0
    dropped_json: dict[str, int] = _json(dict)
    deny_list_json: list[str] = _json(list)
    recorded_at: datetime = _recorded_at()


class CorpusDocumentRow(ArenaTable, table=True):
    """One document of a corpus: ``doc_id`` is the file's id, ``id`` the full-text index's rowid.

    The full-text index is not a table of this metadata: it is built by the DDL below (SQLite: an
    FTS5 table over ``title`` and ``text``; PostgreSQL: a generated ``tsvector`` column with a GIN
    index), and ``is_mapped`` keeps it out of autogenerate. On SQLite, triggers take deleted and
    updated documents out of the index, while new ones are indexed by ``arena.corpus.store`` (the
    only writer of documents) all at once at the end of an import, in id order: 2.7x faster than
    a trigger per row. On SQLite ``id`` is in publish order (``arena.corpus.rowids``).
    """

    __tablename__ = "corpus_document"
    __table_args__ = (UniqueConstraint("corpus_id", "doc_id"), Index(None, "corpus_id", "published_at"))

    id: int | None = Field(default=None, primary_key=True)
    corpus_id: int = _ref("corpus.id")
    doc_id: str
    published_at: datetime = _at()
    title: str = Field(sa_type=Text)
    text: str = Field(sa_type=Text)
    url: str | None = None
    source: str | None = None


FULL_TEXT_TABLE = "corpus_document_fts"
FULL_TEXT_COLUMN = "search"  # PostgreSQL only
FULL_TEXT_INDEX = "ix_corpus_document_search"  # PostgreSQL only
# The same statements as migration 0004 (a revision may not import this module).
FULL_TEXT_DDL = {
    "sqlite": (
        "CREATE VIRTUAL TABLE corpus_document_fts USING fts5(title, text, content='corpus_document', "
        "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
        "CREATE TRIGGER corpus_document_fts_delete AFTER DELETE ON corpus_document BEGIN "
        "INSERT INTO corpus_document_fts(corpus_document_fts, rowid, title, text) "
        "VALUES ('delete', old.id, old.title, old.text); END",
        "CREATE TRIGGER corpus_document_fts_update AFTER UPDATE ON corpus_document BEGIN "
        "INSERT INTO corpus_document_fts(corpus_document_fts, rowid, title, text) "
        "VALUES ('delete', old.id, old.title, old.text); "
        "INSERT INTO corpus_document_fts(rowid, title, text) VALUES (new.id, new.title, new.text); END",
    ),
    "postgresql": (
        "ALTER TABLE corpus_document ADD COLUMN search tsvector GENERATED ALWAYS AS "
        "(setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', text), 'B')) "
        "STORED",
        "CREATE INDEX ix_corpus_document_search ON corpus_document USING gin (search)",
        # Track 10,000 most common lexemes (not 1,000): the search planner reads their frequencies.
        "ALTER TABLE corpus_document ALTER COLUMN search SET STATISTICS 1000",
    ),
}
_documents = metadata.tables["corpus_document"]
for _dialect, _statements in FULL_TEXT_DDL.items():
    for _statement in _statements:
        _ddl = DDL(_statement)  # type: ignore[no-untyped-call]
        event.listen(_documents, "after_create", _ddl.execute_if(dialect=_dialect))
_drop_fts = DDL(f"DROP TABLE IF EXISTS {FULL_TEXT_TABLE}")  # type: ignore[no-untyped-call]
event.listen(_documents, "before_drop", _drop_fts.execute_if(dialect="sqlite"))


def is_mapped(name: str | None, type_: str, parent_names: Any) -> bool:
    """Whether a reflected object is described by this metadata: false for the full-text index
    (FTS5 table and its shadow tables, the ``tsvector`` column and its index), which the DDL
    above builds, so that autogenerate neither drops it nor reports it as a difference."""
    if type_ == "table":
        return not (name or "").startswith(FULL_TEXT_TABLE)
    if type_ == "column":
        return not (parent_names.get("table_name") == "corpus_document" and name == FULL_TEXT_COLUMN)
    return not (type_ == "index" and name == FULL_TEXT_INDEX)
