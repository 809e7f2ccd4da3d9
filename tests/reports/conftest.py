"""Report fixtures: the dashboard's seeded world, on SQLite and PostgreSQL, with a planted secret."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine

from arena.core.clock import SimulatedClock
from tests.dashboard.world import build_world

# Shaped like an OpenRouter key, so both the environment scrub and the key-shape scrub must work.
PLANTED = "sk-or-test-PLANTED-7f3a9c1e5b2d4a6f8e0c"
CREATED = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


@pytest.fixture
def world(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Engine:
    """The seeded world (secret planted in the rows) with the key also in the environment."""
    monkeypatch.setenv("OPENROUTER_API_KEY", PLANTED)
    build_world(engine, leak=PLANTED)
    return engine


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(CREATED)
