"""Read the scoring frames from the arena database, for given cohorts.

Reads go through ``arena.db.read_tables`` (light Core clauses of the columns selected, with the
models' types), not the ORM models, so a reader such as ``arena leaderboard`` imports no ORM.

The loader only reads and reshapes; every score is computed by the pure functions over the
frames it returns. What it decides, and why:

- ``bankroll`` of a seat is the cohort's ``rules.bankroll`` (from its frozen config).
- A cohort whose frozen config this version refuses (launched by an older one with a value now
  out of range, e.g. a bankroll of 1e400) is *unscorable* (``unscorable``): left out of "all
  cohorts", with its one-line reason for the caller to show, and an error when asked for by id,
  so one poisoned cohort never breaks the views of the others.
- ``baseline`` marks the deterministic reference bettors (``BASELINE_KINDS``).
- Decisions are read by ``arena.scoring.load.decisions``. A decision's time is its round's
  ``scheduled_at``: the snapshot time it was made against. Decisions never answered (no
  ``decided_at``: still claimed, or *missed* because a live round was found too late,
  ``arena.engine.rounds.missed``) are left out, so a missed round never counts as an invalid
  answer; ``error_kind`` is null exactly when the decision had no error.
- Stated probabilities come from decisions without error, and from external forecasters'
  imported forecasts (``arena.scoring.load.external``); other than binary markets (one YES
  row), a market keeps one row per outcome stated.
- Markets, resolutions and prices: ``load_markets``; listings, tournament windows, offers and
  leakage guards: ``load_rounds``; the row plumbing they share: ``load_rows``.
- Every query has an ``ORDER BY``: rows arrive in one order, so float sums add up in one order
  and the same database always gives the same bits (``arena.scoring.rules.sums``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import polars as pl
from pydantic import ValidationError
from sqlalchemy import Engine, Select, and_, func, select, union_all
from sqlalchemy.engine import Connection

from agents.baselines import BASELINE_KINDS
from arena.cohorts.config import MAX_SEED, RulesConfig
from arena.cohorts.sections import ScoringConfig
from arena.db.columnar import read_frame
from arena.db.read_tables import (
    agent,
    cohort,
    decision,
    fill,
    market,
    portfolio_close,
    portfolio_snapshot,
)
from arena.scoring.load import markets as load_markets
from arena.scoring.load import rounds as load_rounds
from arena.scoring.load.decisions import read_decisions
from arena.scoring.load.external import external_forecasts, with_external
from arena.scoring.load.frames import Reading, ScoringFrames
from arena.scoring.load.rows import LoadError


@dataclass(frozen=True)
class CohortScoring:
    """The scoring choices a leaderboard takes from its cohorts: bootstrap seed and implied reading.

    One cohort: its ``seed`` and ``scoring.implied``. Several pooled: those of the first cohort by
    id, so every view of the same cohorts (CLI, JSON, dashboard, report) uses the same numbers.
    """

    seed: int = 0
    implied: Reading = "fa"


class _ScoredParts(load_rounds.RoundParts):
    """The parts of a frozen cohort config that scoring reads."""

    rules: RulesConfig = RulesConfig()
    scoring: ScoringConfig = ScoringConfig()


def unscorable(bind: Engine | Connection, cohort_ids: Sequence[str] | None = None) -> dict[str, str]:
    """The cohorts of ``cohort_ids`` (all when None) that cannot be scored, with why (one line):
    a part of the frozen config scoring reads, or the seed, is out of this version's range."""
    query = select(cohort.c.id, cohort.c.seed, cohort.c.config_json).order_by(cohort.c.id)
    if cohort_ids is not None:
        query = query.where(cohort.c.id.in_(list(cohort_ids)))
    with connected(bind) as connection:
        rows = connection.execute(query).all()
    found = {}
    for row in rows:
        try:
            _ScoredParts.model_validate(row.config_json)
        except ValidationError as exc:
            found[row.id] = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {str(e['msg']).removeprefix('Value error, ')}"
                for e in exc.errors()
            )
            continue
        if not 0 <= row.seed <= MAX_SEED:
            found[row.id] = f"seed: {row.seed} is outside [0, {MAX_SEED}]"
    return found


def cohort_scoring(bind: Engine | Connection, cohort_ids: Sequence[str] | None = None) -> CohortScoring:
    """The ``CohortScoring`` of ``cohort_ids`` (all scorable cohorts when None); defaults when
    there are none."""
    query = select(cohort.c.id, cohort.c.seed, cohort.c.config_json).order_by(cohort.c.id)
    with connected(bind) as connection:
        ids = _scorable(connection, cohort_ids)
        first = connection.execute(query.where(cohort.c.id.in_(ids)).limit(1)).first()
    if first is None:
        return CohortScoring()
    implied = ScoringConfig.model_validate(first.config_json.get("scoring", {})).implied  # checked: scorable
    return CohortScoring(seed=first.seed, implied=implied)


def load_frames(
    bind: Engine | Connection,
    cohort_ids: Sequence[str] | None = None,
    *,
    marks_until: datetime | None = None,
) -> ScoringFrames:
    """The scoring frames of ``cohort_ids`` (all cohorts when None) as stored in the database.

    Portfolio marks come as daily closes; ``marks_until`` picks each day's close among the marks
    at or before that time (what ``ScoringFrames.as_of`` needs for an exact mid-day view).
    """
    with connected(bind) as connection:
        cohorts = _cohorts(connection, cohort_ids)
        agents = _agents(connection, cohorts)
        fills = _fills(connection, list(cohorts))
        decisions, stated = read_decisions(connection, list(cohorts))
        forecasts = with_external(stated, external_forecasts(connection, list(cohorts)))
        shown = load_rounds.shown(connection, list(cohorts))
        involved = sorted(
            set(fills["market_id"]) | set(forecasts["market_id"]) | {r.market_id for r in shown}
        )
        binary = load_markets.binary_markets(connection, involved)
        listings = load_rounds.listings(connection, list(cohorts))
        parts = load_rounds.round_parts(connection, list(cohorts))
        tournaments, windows = load_rounds.tournaments(connection, parts, listings)
        return ScoringFrames.of(
            agents=agents,
            fills=fills,
            resolutions=load_markets.resolutions(connection, involved),
            prices=load_markets.prices(connection, involved, binary),
            forecasts=load_markets.binary_on_yes(forecasts, binary),
            snapshots=_snapshots(connection, list(cohorts), marks_until),
            decisions=decisions,
            listings=listings,
            offers=load_rounds.offers(shown, binary, parts, windows),
            guards=load_rounds.guards(connection, list(cohorts)),
            tournaments=tournaments,
            windows=windows,
        )


def model_identities(bind: Engine | Connection, cohort_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """Per seat (``cohort_id``, ``agent``): its ``model`` identity (``agents.registry.model_identity``)."""
    # Here, not at the top: the registry imports every bettor kind and the HTTP client, which
    # only pooling by model needs (``arena leaderboard`` starts faster without them).
    from agents.registry import AgentConfigError, model_identity

    query = select(agent.c.cohort_id, agent.c.name, agent.c.kind, agent.c.settings_json)
    with connected(bind) as connection:
        query = query.where(agent.c.cohort_id.in_(_scorable(connection, cohort_ids)))
        rows = connection.execute(query.order_by(agent.c.cohort_id, agent.c.name)).all()
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


def _scorable(connection: Connection, cohort_ids: Sequence[str] | None) -> list[str]:
    """``cohort_ids`` if each can be scored (else a LoadError naming the first that cannot), or
    every scorable cohort when None."""
    poisoned = unscorable(connection, cohort_ids)
    if cohort_ids is not None:
        for cohort_id in cohort_ids:
            if cohort_id in poisoned:
                raise LoadError(f"cohort {cohort_id!r} cannot be scored: {poisoned[cohort_id]}")
        return list(cohort_ids)
    every = connection.execute(select(cohort.c.id).order_by(cohort.c.id)).scalars().all()
    return [c for c in every if c not in poisoned]


def _cohorts(connection: Connection, cohort_ids: Sequence[str] | None) -> dict[str, Decimal]:
    """Bankroll per scorable cohort id (see ``_scorable``); unknown ids are an error."""
    ids = _scorable(connection, cohort_ids)
    query = select(cohort.c.id, cohort.c.config_json).where(cohort.c.id.in_(ids))
    rows = connection.execute(query.order_by(cohort.c.id)).all()
    found = {row.id: _bankroll(row.config_json) for row in rows}
    missing = [c for c in ids if c not in found]
    if missing:
        raise LoadError(f"no cohort with id {missing[0]!r} (see `arena cohort list`)")
    return found


def _bankroll(config: dict[str, Any]) -> Decimal:
    """The bankroll of a scorable cohort's config (``_scorable`` checked its rules)."""
    return RulesConfig.model_validate(config.get("rules", {})).bankroll


def _agents(connection: Connection, cohorts: dict[str, Decimal]) -> pl.DataFrame:
    rows = connection.execute(
        select(agent.c.cohort_id, agent.c.name, agent.c.kind, agent.c.settings_json)
        .where(agent.c.cohort_id.in_(list(cohorts)))
        .order_by(agent.c.cohort_id, agent.c.name)
    ).all()
    return pl.DataFrame(
        {
            "cohort_id": [r.cohort_id for r in rows],
            "agent": [r.name for r in rows],
            "agent_kind": [r.kind for r in rows],
            "baseline": [r.kind in BASELINE_KINDS for r in rows],
            "mock": [r.kind == "llm" and (r.settings_json or {}).get("provider") == "mock" for r in rows],
            "bankroll": [cohorts[r.cohort_id] for r in rows],
        },
        schema_overrides={"bankroll": pl.Decimal(38, 6)},
    )


def _fills(connection: Connection, cohort_ids: list[str]) -> pl.DataFrame:
    query: Select[*tuple[Any, ...]] = (
        select(
            agent.c.cohort_id,
            agent.c.name.label("agent"),
            fill.c.market_id,
            market.c.venue,
            market.c.category,
            fill.c.outcome,
            fill.c.kind,
            fill.c.amount,
            fill.c.price,
            fill.c.shares,
            fill.c.max_bet,
            decision.c.cash_at_start,
            fill.c.realized_pnl,
            fill.c.filled_at,
        )
        .select_from(fill)
        .join(agent, agent.c.id == fill.c.agent_id)
        .join(market, market.c.id == fill.c.market_id)
        .outerjoin(decision, decision.c.id == fill.c.decision_id)
        .where(agent.c.cohort_id.in_(cohort_ids))
        .order_by(fill.c.id)
    )
    frame = read_frame(connection, query)
    return frame.with_columns(
        pl.col("price").cast(pl.Float64),
        pl.col("realized_pnl").fill_null(Decimal(0)),
        # Only a bet reads its decision's cash (the Kelly reading's φ); sells share decisions.
        pl.when(pl.col("kind") == "buy").then(pl.col("cash_at_start")),
    )


def _snapshots(connection: Connection, cohort_ids: list[str], until: datetime | None) -> pl.DataFrame:
    """Each agent's last mark of every UTC day (at or before ``until``).

    Scoring reads portfolios at daily resolution (latest value, daily returns, drawdown, deployed
    share), so the close of each day carries everything it uses. The closes come from
    ``portfolio_close``, kept by the mark writer; with ``until``, days before its day keep their
    closes and its own day closes at its last mark up to ``until``.
    """
    mark, close = portfolio_snapshot.c, portfolio_close.c
    closes: Any = select(close.agent_id, close.closed_at).where(close.cohort_id.in_(cohort_ids))
    if until is not None:
        midnight = until.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        same_day = (
            select(mark.agent_id, func.max(mark.marked_at).label("closed_at"))
            .where(mark.cohort_id.in_(cohort_ids), mark.marked_at >= midnight, mark.marked_at <= until)
            .group_by(mark.agent_id)
        )
        closes = union_all(closes.where(close.day < midnight.date()), same_day)
    day_closes = closes.subquery()
    query = (
        select(
            mark.cohort_id,
            agent.c.name,
            mark.marked_at,
            mark.cash,
            mark.total_value,
            mark.realized_pnl,
            mark.unrealized_pnl,
        )
        .select_from(portfolio_snapshot)
        .join(agent, agent.c.id == mark.agent_id)
        .join(
            day_closes, and_(day_closes.c.agent_id == mark.agent_id, day_closes.c.closed_at == mark.marked_at)
        )
        .order_by(mark.cohort_id, agent.c.name, mark.marked_at)
    )
    return read_frame(connection, query).rename({"name": "agent"})


@contextmanager
def connected(bind: Engine | Connection) -> Iterator[Connection]:
    """``bind`` itself, or a connection of the engine ``bind`` for the block: all of a load's
    statements run in its one transaction (on SQLite one snapshot), closed (rolled back) after."""
    if isinstance(bind, Connection):
        yield bind
        return
    with bind.connect() as connection:
        yield connection
