"""The ``backend`` fixture of the engine and storage tests: both PostgreSQL write paths.

Those tests run on SQLite, on PostgreSQL with pipelined write units (the default), and on
PostgreSQL one statement at a time (``ARENA_PG_PIPELINE=off``): the two paths must agree on every
row. A conftest takes it with ``from tests.storage_backends import backend``.
"""

from __future__ import annotations

import pytest

PLAIN_POSTGRES = "postgres-plain"


@pytest.fixture(
    name="backend",
    params=[
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param(PLAIN_POSTGRES, marks=pytest.mark.postgres),
    ],
)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``sqlite``, ``postgres`` or ``postgres-plain``; the last sets ``ARENA_PG_PIPELINE=off`` for
    the test and the processes it starts, so every engine they make sends statements one by one."""
    if request.param == PLAIN_POSTGRES:
        monkeypatch.setenv("ARENA_PG_PIPELINE", "off")
    return str(request.param)
