"""Fixtures shared by the workers' tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.polymarket_server import REAL_MARKETS, FakePolymarket, real_market


@pytest.fixture
def venue(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePolymarket]:
    """The fake Polymarket with the recorded markets, named in the environment the arena processes
    (and in-process syncs) inherit."""
    with FakePolymarket() as fake:
        for i in range(len(REAL_MARKETS)):
            fake.add(real_market(i))
        monkeypatch.setenv("ARENA_GAMMA_URL", fake.url)
        monkeypatch.setenv("ARENA_CLOB_URL", fake.url)
        yield fake
