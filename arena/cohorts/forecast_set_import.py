"""Store a ``ForecastSet`` as a cohort of external forecasters on the set's market questions.

One transaction writes everything, or nothing:

- the markets (kept as stored when the arena already has them) with the values the files carry:
  the freeze value at the freeze time and, for a market not resolved yet, its latest value on
  the resolution set's night (``market_snapshot``, source ``forecastbench``);
- a resolution for each resolved market the arena has none for, known from that night (one
  the arena already has must agree);
- the cohort (``completed``: it is never run), whose one round, at the forecast due date, offers
  the markets at their freeze value: what the forecasters were shown;
- an external agent per forecaster and aggregate, its forecasts stated at the due date;
- the ``half`` baseline (ForecastBench's Always 0.5), deciding in that round: 0.5 on every market.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from agents.external import EXTERNAL_KIND
from arena.cohorts.config import CohortConfig, ConfigError, parse_config
from arena.cohorts.external_seats import ExternalForecast, store_forecasts
from arena.cohorts.forecast_sets import ForecastSet, ForecastSetError, SetMarket
from arena.cohorts.launch import free_cohort_id, insert_cohort
from arena.core.clock import Clock
from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    DecisionRow,
    MarketRow,
    MarketSnapshotRow,
    ResolutionRow,
    RoundMarketRow,
    RoundRow,
)
from arena.db.types import decimals_to_json
from arena.db.upsert import insert_ignore

SOURCE = "forecastbench"
HALF_NAME = "always-0.5"
IMPORTED = "imported"  # the claim token of the half baseline's decision: nobody claimed it
YES, NO = "YES", "NO"


@dataclass(frozen=True)
class ImportedSet:
    cohort_id: str
    markets: int
    resolved: int
    forecasters: int
    forecasts: int


def import_forecast_set(engine: Engine, forecast_set: ForecastSet, *, name: str, clock: Clock) -> ImportedSet:
    """Write ``forecast_set`` as a new cohort named ``name``; returns what was written."""
    if not forecast_set.markets:
        raise ForecastSetError("no market question of the set is in the resolution set: nothing to import")
    now = clock.now()
    config = _config(forecast_set, name)
    with session_scope(engine) as session:
        resolved = _markets(session, forecast_set, now)
        cohort_id = free_cohort_id(session, config.name, now)
        insert_cohort(session, cohort_id, config, now=now, status="completed")
        session.flush()
        seats = _seats(session, cohort_id)
        round_id = _round(session, cohort_id, forecast_set)
        _half_decides(session, cohort_id, seats[HALF_NAME], round_id, forecast_set, now)
        written = store_forecasts(
            session,
            cohort_id,
            seats,
            [
                ExternalForecast(f.name, market_id, YES, p, forecast_set.due)
                for f in forecast_set.forecasters
                for market_id, p in sorted(f.forecasts.items())
            ],
            source=forecast_set.question_set,
        )
    return ImportedSet(cohort_id, len(forecast_set.markets), resolved, len(forecast_set.forecasters), written)


def _config(forecast_set: ForecastSet, name: str) -> CohortConfig:
    """The frozen config: one round at the due date, standing until the resolution set's night."""
    agents: list[dict[str, Any]] = [
        {"name": f.name, "kind": EXTERNAL_KIND, **f.settings} for f in forecast_set.forecasters
    ]
    agents.append({"name": HALF_NAME, "kind": "half"})
    try:
        return _parsed(forecast_set, name, agents)
    except ConfigError as exc:  # a --name out of bounds, a forecaster named like another
        raise ForecastSetError(str(exc)) from None


def _parsed(forecast_set: ForecastSet, name: str, agents: list[dict[str, Any]]) -> CohortConfig:
    return parse_config(
        {
            "name": name,
            "mode": "replay",
            "dataset": forecast_set.question_set,
            "start": forecast_set.due.isoformat(),
            "schedule": {"every": f"{(forecast_set.resolved_on - forecast_set.due).days}d", "rounds": 1},
            "agents": agents,
        },
        source="imported forecast set",
    )


def _markets(session: Session, forecast_set: ForecastSet, now: datetime) -> int:
    """Markets, their values and the resolutions the arena lacks; returns the resolved count."""
    insert_ignore(session, MarketRow, [_market_row(m, now) for m in forecast_set.markets], on=["id"])
    snapshots = [_snapshot(m.market_id, m.freeze_at, m.freeze_value) for m in forecast_set.markets]
    snapshots += [
        _snapshot(m.market_id, forecast_set.resolved_on, m.value)
        for m in forecast_set.markets
        if not m.resolved
    ]
    insert_ignore(session, MarketSnapshotRow, snapshots, on=["market_id", "source", "observed_at"])
    resolved = [m for m in forecast_set.markets if m.resolved]
    stored = {
        r.market_id: r.kind
        for r in session.exec(
            select(ResolutionRow).where(col(ResolutionRow.market_id).in_([m.market_id for m in resolved]))
        )
    }
    for m in resolved:
        kind = YES if m.value == 1 else NO
        if stored.get(m.market_id, kind) != kind:
            raise ForecastSetError(
                f"market {m.market_id}: the arena has it resolved {stored[m.market_id]}, "
                f"the resolution set says {kind}"
            )
    rows = [
        {
            "market_id": m.market_id,
            "kind": YES if m.value == 1 else NO,
            "payouts_json": {YES: str(m.value), NO: str(1 - m.value)},
            "resolved_at": forecast_set.resolved_on,
            "detected_at": forecast_set.resolved_on,
            "source": SOURCE,
        }
        for m in resolved
        if m.market_id not in stored
    ]
    insert_ignore(session, ResolutionRow, rows, on=["market_id"])
    return len(resolved)


def _market_row(m: SetMarket, now: datetime) -> dict[str, Any]:
    return {
        "id": m.market_id,
        "venue": m.source,
        "venue_id": m.venue_id,
        "question": m.question,
        "description": m.background,
        "outcomes_json": [YES, NO],
        "open_time": m.open_time,
        "close_time": m.close_time,
        "url": m.url,
        "token_ids_json": {},
        "first_seen_at": now,
        "updated_at": now,
    }


def _prices(yes: Decimal) -> dict[str, str]:
    return decimals_to_json({YES: yes, NO: 1 - yes})


def _snapshot(market_id: str, at: datetime, yes: Decimal) -> dict[str, Any]:
    return {
        "market_id": market_id,
        "source": SOURCE,
        "observed_at": at,
        "prices_json": _prices(yes),
        "bids_json": {},
        "asks_json": {},
    }


def _seats(session: Session, cohort_id: str) -> dict[str, int]:
    rows = session.exec(select(AgentRow.name, AgentRow.id).where(AgentRow.cohort_id == cohort_id)).all()
    return {agent: agent_id for agent, agent_id in rows if agent_id is not None}


def _round(session: Session, cohort_id: str, forecast_set: ForecastSet) -> int:
    """The one round, at the due date, offering the markets at their freeze value."""
    row = RoundRow(
        cohort_id=cohort_id,
        round_index=0,
        scheduled_at=forecast_set.due,
        status="done",
        market_count=len(forecast_set.markets),
        started_at=forecast_set.due,
        finished_at=forecast_set.due,
    )
    session.add(row)
    session.flush()
    assert row.id is not None
    session.add_all(
        RoundMarketRow(
            round_id=row.id,
            market_id=m.market_id,
            source=SOURCE,
            observed_at=m.freeze_at,
            prices_json=_prices(m.freeze_value),
        )
        for m in forecast_set.markets
    )
    return row.id


def _half_decides(
    session: Session, cohort_id: str, agent_id: int, round_id: int, forecast_set: ForecastSet, now: datetime
) -> None:
    """What the ``half`` bettor answers on the round's snapshot: 0.5 on every (binary) market."""
    session.add(
        DecisionRow(
            round_id=round_id,
            agent_id=agent_id,
            cohort_id=cohort_id,
            claim_token=IMPORTED,
            status="done",
            claimed_at=now,
            decided_at=forecast_set.due,
            probabilities_json={m.market_id: {YES: 0.5} for m in forecast_set.markets},
            reasoning="half: states 50% everywhere, never bets",
            attempts=1,
        )
    )
