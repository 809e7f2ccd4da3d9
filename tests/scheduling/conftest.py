"""Fixtures of the live-job tests: the fake Polymarket on loopback, named in the environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePolymarket]:
    """The fake Polymarket with the recorded markets; ``ARENA_GAMMA_URL`` and ``ARENA_CLOB_URL``
    name it for the jobs run in-process (and for a serve started with this environment)."""
    with FakePolymarket() as venue:
        for i in range(len(REAL_MARKETS)):
            venue.add(real_market(i))
        monkeypatch.setenv("ARENA_GAMMA_URL", venue.url)
        monkeypatch.setenv("ARENA_CLOB_URL", venue.url)
        yield venue
