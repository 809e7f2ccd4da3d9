"""External forecasters' seats and forecasts: what both forecast importers write.

An external forecaster (``agents.external``) is an agent row of kind ``external`` in a cohort;
its forecasts are ``external_forecast`` rows with their own times. Writers call these inside
their own unit of work, so an import is stored whole or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from agents.external import EXTERNAL_KIND
from arena.db.models import AgentRow, ExternalForecastRow


@dataclass(frozen=True)
class ExternalForecast:
    """One forecast: the forecaster's agent name, the market outcome, its probability and time."""

    agent: str
    market_id: str
    outcome: str
    p: float
    stated_at: datetime


def seat_external(
    session: Session, cohort_id: str, name: str, settings: Mapping[str, str], now: datetime
) -> int:
    """Seat a new external forecaster ``name`` in the cohort; returns its agent id."""
    row = AgentRow(
        cohort_id=cohort_id, name=name, kind=EXTERNAL_KIND, settings_json=dict(settings), created_at=now
    )
    session.add(row)
    session.flush()
    assert row.id is not None
    return row.id


def store_forecasts(
    session: Session,
    cohort_id: str,
    seats: Mapping[str, int],
    forecasts: Sequence[ExternalForecast],
    *,
    source: str,
) -> int:
    """Add ``forecasts`` (each by an agent of ``seats``: name → agent id); returns how many."""
    session.add_all(
        ExternalForecastRow(
            agent_id=seats[f.agent],
            cohort_id=cohort_id,
            market_id=f.market_id,
            outcome=f.outcome,
            p=f.p,
            stated_at=f.stated_at,
            source=source,
        )
        for f in forecasts
    )
    return len(forecasts)
