"""Read the scoring frames from the arena database (``arena.db.models``), for given cohorts.

The loader only reads and reshapes; every score is computed by the pure functions over the
frames it returns. What it decides, and why:

- ``bankroll`` of a seat is the cohort's ``rules.bankroll`` (from its frozen config).
- ``baseline`` marks the deterministic reference bettors (``BASELINE_KINDS``).
- A decision's time is its round's ``scheduled_at``: the snapshot time it was made against.
  Decisions still claimed (no ``decided_at``) are left out; ``error_kind`` is null exactly
  when the decision had no error.
- Stated probabilities come from decisions without error. On a binary market a YES value is
  used as given; a NO-only statement q becomes YES 1 − q. Other markets keep one row per
  outcome stated.
- Prices are every price the arena observed for the markets involved: recorded market
  snapshots and the prices shown in rounds. Binary markets keep the YES price (NO is 1 − YES,
  as fills use it); where a source gives only NO, YES is 1 − NO. Two sources at the same
  instant: the round's price (what agents saw) wins, then sources in name order.
- A market's listing time in a cohort is the first round whose snapshot held it.
- Offers are every (round, market) of a cohort's snapshots with the prices shown (binary
  markets: YES), which imputation scores; their markets' resolutions are read too.
- Guards: each ``llm`` seat of a replay cohort, with the end of its ``knowledge_cutoff`` day and
  whether the leakage guard covered it (``off`` without a cutoff).
- Every query has an ``ORDER BY``: rows arrive in one order, so float sums add up in one order
  and the same database always gives the same bits (``arena.scoring.sums``).
- Resolutions are read with their winner: the outcome paying $1 (``OUTCOME``), the kind
  itself (``YES``/``NO``), none for ``VOID``/``5050``; payouts that disagree are an error.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError
from sqlalchemy import Engine, Select, and_, func, select, union_all
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session
from sqlmodel import col

from agents.baselines import BASELINE_KINDS
from agents.registry import AgentConfigError, model_identity
from arena.clock import ensure_utc
from arena.cohorts.config import (
    RulesConfig,
    ScheduleConfig,
    ScoringConfig,
    TournamentConfig,
    UtcDateTime,
    decisions_end,
)
from arena.db.columnar import read_frame
from arena.db.models import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    MarketRow,
    MarketSnapshotRow,
    PortfolioCloseRow,
    PortfolioSnapshotRow,
    ResolutionRow,
    RoundMarketRow,
    RoundRow,
)
from arena.engine.leakage import LLM_KIND, knowledge_ends
from arena.engine.round_store import first_offered
from arena.scoring.frames import (
    DECISIONS,
    FILLS,
    FORECASTS,
    GUARDS,
    LISTINGS,
    OFFERS,
    PRICES,
    RESOLUTIONS,
    TOURNAMENTS,
    WINDOWS,
    FrameSpec,
    ScoringFrames,
)
from arena.scoring.scores import Reading

BINARY = ["YES", "NO"]
_CHUNK = 500  # ids per IN (...) list, well under every backend's parameter limit
ROUND_SOURCE = "round"


class LoadError(ValueError):
    """Stored rows cannot be read as scoring frames; the message names the table, row and field."""


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
        shown = _shown(session, list(cohorts))
        involved = sorted(
            set(fills["market_id"]) | set(forecasts["market_id"]) | {r.market_id for r in shown}
        )
        binary = _binary_markets(session, involved)
        listings = _listings(session, list(cohorts))
        tournaments, windows = _tournaments(session, list(cohorts), listings)
        return ScoringFrames.of(
            agents=agents,
            fills=fills,
            resolutions=_resolutions(session, involved),
            prices=_prices(session, involved, binary),
            forecasts=_binary_on_yes(forecasts, binary),
            snapshots=_snapshots(session, list(cohorts), marks_until),
            decisions=decisions,
            listings=listings,
            offers=_offers(shown, binary),
            guards=_guards(session, list(cohorts)),
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
    frame = _frame(session.execute(query).all(), FILLS)
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
    stated = [
        (r.cohort_id, r.name, market_id, outcome, _probability(r.id, market_id, outcome, p), r.scheduled_at)
        for r in rows
        if r.error is None
        for market_id, by_outcome in (r.probabilities_json or {}).items()
        for outcome, p in by_outcome.items()
    ]
    return _frame(decisions, DECISIONS), _frame(stated, FORECASTS)


def _probability(decision_id: int, market_id: str, outcome: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise LoadError(
            f"decision {decision_id}: probabilities_json[{market_id!r}][{outcome!r}] must be a number "
            f"in [0, 1], got {value!r}"
        )
    return float(value)


def _binary_markets(session: Session, market_ids: list[str]) -> set[str]:
    rows = _chunked(
        session,
        market_ids,
        lambda ids: select(col(MarketRow.id), col(MarketRow.outcomes_json)).where(col(MarketRow.id).in_(ids)),
    )
    return {r.id for r in rows if list(r.outcomes_json) == BINARY}


def _binary_on_yes(forecasts: pl.DataFrame, binary: set[str]) -> pl.DataFrame:
    """Binary statements as YES: the YES value if stated, else 1 − the NO value."""
    on_binary = pl.col("market_id").is_in(list(binary))
    key = ["cohort_id", "agent", "market_id", "stated_at"]
    has_yes = (pl.col("outcome") == "YES").any().over(key)
    keep = ~on_binary | (pl.col("outcome") == "YES") | ((pl.col("outcome") == "NO") & ~has_yes)
    flipped = pl.when(on_binary & (pl.col("outcome") == "NO"))
    return forecasts.filter(keep).with_columns(
        p=flipped.then(1.0 - pl.col("p")).otherwise(pl.col("p")),
        outcome=flipped.then(pl.lit("YES")).otherwise(pl.col("outcome")),
    )


def _resolutions(session: Session, market_ids: list[str]) -> pl.DataFrame:
    rows = _chunked(
        session,
        market_ids,
        lambda ids: (
            select(
                col(ResolutionRow.market_id),
                col(ResolutionRow.kind),
                col(ResolutionRow.payouts_json),
                col(ResolutionRow.resolved_at),
            )
            .where(col(ResolutionRow.market_id).in_(ids))
            .order_by(col(ResolutionRow.market_id))
        ),
    )
    table = [(r.market_id, r.kind, _winner(r.market_id, r.kind, r.payouts_json), r.resolved_at) for r in rows]
    return _frame(table, RESOLUTIONS)


def _winner(market_id: str, kind: str, payouts: dict[str, str]) -> str | None:
    """The outcome that won, checked against the payouts (all 0 but the winner's 1)."""
    values = {outcome: Decimal(str(v)) for outcome, v in payouts.items()}
    winners = [o for o, v in values.items() if v == 1]
    if kind in ("VOID", "5050"):
        expected_ok = kind == "VOID" or all(v == Decimal("0.5") for v in values.values())
        winner = None
    else:
        winner = kind if kind in BINARY else (winners[0] if len(winners) == 1 else None)
        expected_ok = winner is not None and winners == [winner] and all(v in (0, 1) for v in values.values())
    if not expected_ok:
        raise LoadError(f"resolution of {market_id!r}: payouts_json {payouts} do not fit kind {kind}")
    return winner


def _prices(session: Session, market_ids: list[str], binary: set[str]) -> pl.DataFrame:
    snapshots = _chunked(
        session,
        market_ids,
        lambda ids: (
            select(
                col(MarketSnapshotRow.market_id),
                col(MarketSnapshotRow.source),
                col(MarketSnapshotRow.observed_at),
                col(MarketSnapshotRow.prices_json),
            )
            .where(col(MarketSnapshotRow.market_id).in_(ids))
            .order_by(
                col(MarketSnapshotRow.market_id),
                col(MarketSnapshotRow.observed_at),
                col(MarketSnapshotRow.id),
            )
        ),
    )
    shown = _chunked(
        session,
        market_ids,
        lambda ids: (
            select(
                col(RoundMarketRow.market_id),
                col(RoundMarketRow.observed_at),
                col(RoundMarketRow.prices_json),
            )
            .where(col(RoundMarketRow.market_id).in_(ids))
            .order_by(
                col(RoundMarketRow.market_id), col(RoundMarketRow.observed_at), col(RoundMarketRow.round_id)
            )
        ),
    )
    observations = [(r.market_id, ROUND_SOURCE, r.observed_at, r.prices_json) for r in shown]
    observations += sorted(
        ((r.market_id, r.source, r.observed_at, r.prices_json) for r in snapshots), key=lambda r: r[1]
    )
    rows: dict[tuple[str, str, Any], float] = {}
    for market_id, _source, observed_at, prices in observations:
        for outcome, price in _outcome_prices(market_id, prices, market_id in binary).items():
            rows.setdefault((market_id, outcome, observed_at), price)
    table = [(m, o, at, p) for (m, o, at), p in rows.items()]
    return _frame(table, PRICES)


def _outcome_prices(market_id: str, prices: dict[str, str], binary: bool) -> dict[str, float]:
    try:
        values = {outcome: float(Decimal(str(v))) for outcome, v in prices.items()}
    except ArithmeticError:
        raise LoadError(f"price of {market_id!r}: prices_json {prices} holds a non-number") from None
    if not binary:
        return values
    if "YES" in values:
        return {"YES": values["YES"]}
    return {"YES": 1.0 - values["NO"]} if "NO" in values else {}


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


def _listings(session: Session, cohort_ids: list[str]) -> pl.DataFrame:
    """Per cohort and market, the first round whose snapshot offered it (the start of coverage)."""
    return _frame(first_offered(session, cohort_ids), LISTINGS)


class _TournamentParts(BaseModel):
    """The parts of a frozen cohort config that tournament windows depend on."""

    model_config = ConfigDict(extra="ignore")
    start: UtcDateTime | None = None
    schedule: ScheduleConfig = ScheduleConfig()
    tournament: TournamentConfig = TournamentConfig()


def _tournaments(
    session: Session, cohort_ids: list[str], listings: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each cohort's ``[tournament]`` settings, and the window of every market it offered.

    A window is ``TournamentConfig.window`` of the listing, the market's stored close time and the
    cohort's end: ``start + every × rounds``, or, while the number of rounds is open, one period
    after its last round so far (the hidden period needs a fixed number of rounds, so the engine
    hid exactly the prices these windows say it hid).
    """
    configs, ends = {}, {}
    last_rounds: dict[str, datetime] = dict(
        session.execute(
            select(col(RoundRow.cohort_id), func.max(col(RoundRow.scheduled_at)))
            .where(col(RoundRow.cohort_id).in_(cohort_ids))
            .group_by(col(RoundRow.cohort_id))
        ).all()
    )
    for row in session.execute(
        select(col(CohortRow.id), col(CohortRow.config_json)).where(col(CohortRow.id).in_(cohort_ids))
    ):
        try:
            config = _TournamentParts.model_validate(row.config_json)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise LoadError(f"cohort {row.id!r}: config_json is not valid ({problems})") from None
        configs[row.id] = config.tournament
        last = last_rounds.get(row.id)
        end = decisions_end(config.start, config.schedule)
        ends[row.id] = end or (last and ensure_utc(last) + config.schedule.every)
    settings = [
        (cohort_id, t.prize_pool, t.reference, t.s_weight, t.c_weight) for cohort_id, t in configs.items()
    ]
    closes = dict(
        _chunked(
            session,
            sorted(set(listings["market_id"])),
            lambda ids: select(col(MarketRow.id), col(MarketRow.close_time)).where(
                col(MarketRow.id).in_(ids)
            ),
        )
    )
    windows = []
    for cohort_id, market_id, listed_at in listings.iter_rows():
        close = closes.get(market_id)
        end = ends[cohort_id]
        if end is None:  # a listing comes from a round, so its cohort has one
            raise LoadError(f"cohort {cohort_id!r}: market {market_id!r} is listed but no round is stored")
        w = configs[cohort_id].window(listed_at, close and ensure_utc(close), end)
        windows.append((cohort_id, market_id, w.opens_at, w.hidden_until, w.closes_at))
    return _frame(settings, TOURNAMENTS), _frame(windows, WINDOWS)


def _shown(session: Session, cohort_ids: list[str]) -> list[Any]:
    """Every market of every round snapshot of the cohorts, with its prices as shown."""
    query = (
        select(
            col(RoundRow.cohort_id),
            col(RoundMarketRow.market_id),
            col(RoundRow.scheduled_at),
            col(RoundMarketRow.prices_json),
        )
        .join(RoundRow, col(RoundRow.id) == col(RoundMarketRow.round_id))
        .where(col(RoundRow.cohort_id).in_(cohort_ids))
    )
    return list(session.execute(query).all())


def _offers(shown: list[Any], binary: set[str]) -> pl.DataFrame:
    """One row per (round, market outcome) offered; binary markets by their YES price."""
    table = [
        (cohort_id, market_id, outcome, offered_at, price)
        for cohort_id, market_id, offered_at, prices in shown
        for outcome, price in _outcome_prices(market_id, prices, market_id in binary).items()
    ]
    return _frame(table, OFFERS)


def _guards(session: Session, cohort_ids: list[str]) -> pl.DataFrame:
    """LLM seats of replay cohorts: the end of their knowledge-cutoff day, and the guard's state."""
    rows = session.execute(
        select(col(AgentRow.cohort_id), col(AgentRow.name), col(AgentRow.settings_json))
        .join(CohortRow, col(CohortRow.id) == col(AgentRow.cohort_id))
        .where(
            col(AgentRow.cohort_id).in_(cohort_ids),
            col(AgentRow.kind) == LLM_KIND,
            col(CohortRow.mode) == "replay",
        )
    ).all()
    table = []
    for r in rows:
        cutoff = (r.settings_json or {}).get("knowledge_cutoff")
        try:
            ends = None if cutoff is None else knowledge_ends(cutoff)
        except ValueError:
            raise LoadError(
                f"agent {r.name!r} of cohort {r.cohort_id!r}: knowledge_cutoff {cutoff!r} is not a date"
            ) from None
        table.append((r.cohort_id, r.name, ends, "off" if ends is None else "on"))
    return _frame(table, GUARDS)


def _chunked(session: Session, ids: list[str], query: Any) -> list[Any]:
    rows: list[Any] = []
    for start in range(0, len(ids), _CHUNK):
        rows.extend(session.execute(query(ids[start : start + _CHUNK])).all())
    return rows


def _frame(rows: Iterable[Sequence[Any]], spec: FrameSpec) -> pl.DataFrame:
    """Rows, in the order of ``spec``'s columns, as a frame; dtypes are fixed later by ``spec.conform``."""
    columns = [column.name for column in spec.columns]
    by_column: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        for name, value in zip(columns, row, strict=True):
            by_column[name].append(value)
    return pl.DataFrame(
        {name: pl.Series(name, by_column[name], dtype=_hint(by_column[name])) for name in columns}
    )


def _hint(values: list[Any]) -> pl.DataType | None:
    """Decimal columns of mixed scale need a common dtype up front; others are inferred."""
    if any(isinstance(v, Decimal) for v in values):
        return pl.Decimal(38, 10)
    return None if values else pl.Null()
