"""Read the scoring frames from the arena database (``arena.db.models``), for given cohorts.

The loader only reads and reshapes; every score is computed by the pure functions over the
frames it returns. What it decides, and why:

- ``bankroll`` of a seat is the cohort's ``rules.bankroll`` (from its frozen config).
- ``baseline`` marks the deterministic reference bettors (``BASELINE_KINDS``).
- A decision's time is its round's ``scheduled_at``: the snapshot time it was made against.
  Decisions never answered (no ``decided_at``: still claimed, or *missed* because a live round
  was found too late, ``arena.engine.missed_rounds``) are left out, so a missed round never
  counts as an invalid answer; ``error_kind`` is null exactly when the decision had no error.
- Stated probabilities come from decisions without error; other than binary markets (one YES
  row), a market keeps one row per outcome stated.
- Markets, resolutions and prices: ``load_markets``; listings, tournament windows, offers and
  leakage guards: ``load_rounds``; the row plumbing they share: ``load_rows``.
- Every query has an ``ORDER BY``: rows arrive in one order, so float sums add up in one order
  and the same database always gives the same bits (``arena.scoring.sums``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import polars as pl
from sqlalchemy import Engine, Select, and_, func, select, union_all
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session
from sqlmodel import col

from agents.baselines import BASELINE_KINDS
from arena.cohorts.config import RulesConfig
from arena.cohorts.sections import ScoringConfig
from arena.db.columnar import read_frame
from arena.db.models import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    MarketRow,
    PortfolioCloseRow,
    PortfolioSnapshotRow,
    RoundRow,
)
from arena.scoring import load_markets, load_rounds
from arena.scoring.frames import (
    DECISIONS,
    ScoringFrames,
)
from arena.scoring.load_rows import LoadError, frame_of
from arena.scoring.scores import Reading


@dataclass(frozen=True)
class CohortScoring:
    """The scoring choices a leaderboard takes from its cohorts: bootstrap seed and implied reading.

    One cohort: its ``seed`` and ``scoring.implied``. Several pooled: those of the first cohort by
    id, so every view of the same cohorts (CLI, JSON, dashboard, report) uses the same numbers.
    """

    seed: int = 0
    implied: Reading = "fa"


def cohort_scoring(
    bind: Engine | Connection | Session, cohort_ids: Sequence[str] | None = None
) -> CohortScoring:
    """The ``CohortScoring`` of ``cohort_ids`` (all cohorts when None); defaults when there are none."""
    session = bind if isinstance(bind, Session) else Session(bind)
    try:
        query = select(col(CohortRow.id), col(CohortRow.seed), col(CohortRow.config_json)).order_by(
            col(CohortRow.id)
        )
        if cohort_ids is not None:
            query = query.where(col(CohortRow.id).in_(list(cohort_ids)))
        first = session.execute(query.limit(1)).first()
    finally:
        if session is not bind:
            session.close()
    if first is None:
        return CohortScoring()
    try:
        implied = ScoringConfig.model_validate(first.config_json.get("scoring", {})).implied
    except ValueError as exc:
        raise LoadError(f"cohort {first.id!r}: config_json.scoring is not valid ({exc})") from None
    return CohortScoring(seed=first.seed, implied=implied)


def load_frames(
    bind: Engine | Connection | Session,
    cohort_ids: Sequence[str] | None = None,
    *,
    marks_until: datetime | None = None,
) -> ScoringFrames:
    """The scoring frames of ``cohort_ids`` (all cohorts when None) as stored in the database.

    Portfolio marks come as daily closes; ``marks_until`` picks each day's close among the marks
    at or before that time (what ``ScoringFrames.as_of`` needs for an exact mid-day view).
    """
    session = bind if isinstance(bind, Session) else Session(bind)
    try:
        cohorts = _cohorts(session, cohort_ids)
        agents = _agents(session, cohorts)
        fills = _fills(session, list(cohorts))
        decisions, forecasts = _decisions(session, list(cohorts))
        shown = load_rounds.shown(session, list(cohorts))
        involved = sorted(
            set(fills["market_id"]) | set(forecasts["market_id"]) | {r.market_id for r in shown}
        )
        binary = load_markets.binary_markets(session, involved)
        listings = load_rounds.listings(session, list(cohorts))
        tournaments, windows = load_rounds.tournaments(session, list(cohorts), listings)
        return ScoringFrames.of(
            agents=agents,
            fills=fills,
            resolutions=load_markets.resolutions(session, involved),
            prices=load_markets.prices(session, involved, binary),
            forecasts=load_markets.binary_on_yes(forecasts, binary),
            snapshots=_snapshots(session, list(cohorts), marks_until),
            decisions=decisions,
            listings=listings,
            offers=load_rounds.offers(shown, binary),
            guards=load_rounds.guards(session, list(cohorts)),
            tournaments=tournaments,
            windows=windows,
        )
    finally:
        if session is not bind:
            session.close()


def model_identities(
    bind: Engine | Connection | Session, cohort_ids: Sequence[str] | None = None
) -> pl.DataFrame:
    """Per seat (``cohort_id``, ``agent``): its ``model`` identity (``agents.registry.model_identity``)."""
    # Here, not at the top: the registry imports every bettor kind and the HTTP client, which
    # only pooling by model needs (``arena leaderboard`` starts faster without them).
    from agents.registry import AgentConfigError, model_identity

    session = bind if isinstance(bind, Session) else Session(bind)
    try:
        query = select(
            col(AgentRow.cohort_id), col(AgentRow.name), col(AgentRow.kind), col(AgentRow.settings_json)
        )
        if cohort_ids is not None:
            query = query.where(col(AgentRow.cohort_id).in_(list(cohort_ids)))
        rows = session.execute(query.order_by(col(AgentRow.cohort_id), col(AgentRow.name))).all()
    finally:
        if session is not bind:
            session.close()
    models = []
    for row in rows:
        try:
            models.append(model_identity(row.kind, row.settings_json or {}))
        except AgentConfigError as exc:
            raise LoadError(f"agent {row.name!r} of cohort {row.cohort_id!r}: {exc}") from None
    return pl.DataFrame(
        {"cohort_id": [r.cohort_id for r in rows], "agent": [r.name for r in rows], "model": models},
        schema={"cohort_id": pl.String, "agent": pl.String, "model": pl.String},
    )


def _cohorts(session: Session, cohort_ids: Sequence[str] | None) -> dict[str, Decimal]:
    """Bankroll per cohort id; unknown ids are an error."""
    query = select(col(CohortRow.id), col(CohortRow.config_json))
    if cohort_ids is not None:
        query = query.where(col(CohortRow.id).in_(list(cohort_ids)))
    rows = session.execute(query.order_by(col(CohortRow.id))).all()
    found = {row.id: _bankroll(row.id, row.config_json) for row in rows}
    missing = [c for c in cohort_ids or () if c not in found]
    if missing:
        raise LoadError(f"cohort {missing[0]!r} not found (see `arena cohort list`)")
    return found


def _bankroll(cohort_id: str, config: dict[str, Any]) -> Decimal:
    try:
        return RulesConfig.model_validate(config.get("rules", {})).bankroll
    except ValueError as exc:
        raise LoadError(f"cohort {cohort_id!r}: config_json.rules is not valid ({exc})") from None


def _agents(session: Session, cohorts: dict[str, Decimal]) -> pl.DataFrame:
    rows = session.execute(
        select(col(AgentRow.cohort_id), col(AgentRow.name), col(AgentRow.kind))
        .where(col(AgentRow.cohort_id).in_(list(cohorts)))
        .order_by(col(AgentRow.cohort_id), col(AgentRow.name))
    ).all()
    return pl.DataFrame(
        {
            "cohort_id": [r.cohort_id for r in rows],
            "agent": [r.name for r in rows],
            "agent_kind": [r.kind for r in rows],
            "baseline": [r.kind in BASELINE_KINDS for r in rows],
            "bankroll": [cohorts[r.cohort_id] for r in rows],
        },
        schema_overrides={"bankroll": pl.Decimal(38, 6)},
    )


def _fills(session: Session, cohort_ids: list[str]) -> pl.DataFrame:
    query: Select[*tuple[Any, ...]] = (
        select(
            col(AgentRow.cohort_id),
            col(AgentRow.name).label("agent"),
            col(FillRow.market_id),
            col(MarketRow.venue),
            col(MarketRow.category),
            col(FillRow.outcome),
            col(FillRow.kind),
            col(FillRow.amount),
            col(FillRow.price),
            col(FillRow.shares),
            col(FillRow.max_bet),
            col(DecisionRow.cash_at_start),
            col(FillRow.realized_pnl),
            col(FillRow.filled_at),
        )
        .join(AgentRow, col(AgentRow.id) == col(FillRow.agent_id))
        .join(MarketRow, col(MarketRow.id) == col(FillRow.market_id))
        .outerjoin(DecisionRow, col(DecisionRow.id) == col(FillRow.decision_id))
        .where(col(AgentRow.cohort_id).in_(cohort_ids))
        .order_by(col(FillRow.id))
    )
    frame = read_frame(session.connection(), query)
    return frame.with_columns(
        pl.col("price").cast(pl.Float64),
        pl.col("realized_pnl").fill_null(Decimal(0)),
        # Only a bet reads its decision's cash (the Kelly reading's φ); sells share decisions.
        pl.when(pl.col("kind") == "buy").then(pl.col("cash_at_start")),
    )


def _decisions(session: Session, cohort_ids: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The decisions frame and the raw stated probabilities (one row per market and outcome)."""
    query = (
        select(
            col(DecisionRow.id),
            col(DecisionRow.cohort_id),
            col(AgentRow.name),
            col(RoundRow.scheduled_at),
            col(DecisionRow.error),
            col(DecisionRow.error_kind),
            col(DecisionRow.prompt_tokens),
            col(DecisionRow.completion_tokens),
            col(DecisionRow.cost_usd),
            col(DecisionRow.latency_s),
            col(DecisionRow.probabilities_json),
        )
        .join(AgentRow, col(AgentRow.id) == col(DecisionRow.agent_id))
        .join(RoundRow, col(RoundRow.id) == col(DecisionRow.round_id))
        .where(col(DecisionRow.cohort_id).in_(cohort_ids), col(DecisionRow.decided_at).is_not(None))
        .order_by(col(DecisionRow.id))
    )
    return _decision_frames(session.execute(query).all())


def _decision_frames(rows: Sequence[Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    decisions = [
        (
            r.cohort_id,
            r.name,
            r.scheduled_at,
            None if r.error is None else (r.error_kind or "error"),
            r.prompt_tokens + r.completion_tokens,
            r.cost_usd,
            r.latency_s,
        )
        for r in rows
    ]
    frame = frame_of(decisions, DECISIONS)
    # A cohort's decisions state thousands of probabilities: each is kept as (market, outcome, p)
    # and the index of its decision, whose seat and time are then gathered as columns of ``frame``.
    index: list[int] = []
    stated: list[tuple[str, str, float]] = []
    for i, r in enumerate(rows):
        if r.error is None and r.probabilities_json:
            own = [
                (market_id, outcome, _probability(r.id, market_id, outcome, p))
                for market_id, by_outcome in r.probabilities_json.items()
                for outcome, p in by_outcome.items()
            ]
            index += [i] * len(own)
            stated += own
    markets, outcomes, probabilities = zip(*stated, strict=True) if stated else ((), (), ())
    forecasts = frame[index].select(
        "cohort_id",
        "agent",
        pl.Series("market_id", markets, dtype=pl.String),
        pl.Series("outcome", outcomes, dtype=pl.String),
        pl.Series("p", probabilities, dtype=pl.Float64),
        stated_at="decided_at",
    )
    return frame, forecasts


def _probability(decision_id: int, market_id: str, outcome: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise LoadError(
            f"decision {decision_id}: probabilities_json[{market_id!r}][{outcome!r}] must be a number "
            f"in [0, 1], got {value!r}"
        )
    return float(value)


def _snapshots(session: Session, cohort_ids: list[str], until: datetime | None) -> pl.DataFrame:
    """Each agent's last mark of every UTC day (at or before ``until``).

    Scoring reads portfolios at daily resolution (latest value, daily returns, drawdown, deployed
    share), so the close of each day carries everything it uses. The closes come from
    ``portfolio_close``, kept by the mark writer; with ``until``, days before its day keep their
    closes and its own day closes at its last mark up to ``until``.
    """
    mark, close = PortfolioSnapshotRow, PortfolioCloseRow
    closes: Any = select(col(close.agent_id), col(close.closed_at)).where(
        col(close.cohort_id).in_(cohort_ids)
    )
    if until is not None:
        midnight = until.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        same_day = (
            select(col(mark.agent_id), func.max(col(mark.marked_at)).label("closed_at"))
            .where(
                col(mark.cohort_id).in_(cohort_ids),
                col(mark.marked_at) >= midnight,
                col(mark.marked_at) <= until,
            )
            .group_by(col(mark.agent_id))
        )
        closes = union_all(closes.where(col(close.day) < midnight.date()), same_day)
    day_closes = closes.subquery()
    query = (
        select(
            col(mark.cohort_id),
            col(AgentRow.name),
            col(mark.marked_at),
            col(mark.cash),
            col(mark.total_value),
            col(mark.realized_pnl),
            col(mark.unrealized_pnl),
        )
        .join(AgentRow, col(AgentRow.id) == col(mark.agent_id))
        .join(
            day_closes,
            and_(day_closes.c.agent_id == col(mark.agent_id), day_closes.c.closed_at == col(mark.marked_at)),
        )
        .order_by(col(mark.cohort_id), col(AgentRow.name), col(mark.marked_at))
    )
    return read_frame(session.connection(), query).rename({"name": "agent"})
