"""Tests of the work queue and ``arena worker``: PostgreSQL only (``FOR UPDATE SKIP LOCKED``)."""

from __future__ import annotations

import pytest

# Direct parametrization overrides the shared ``backend`` fixture's SQLite-and-PostgreSQL params.
ON_POSTGRES = pytest.mark.parametrize("backend", [pytest.param("postgres", marks=pytest.mark.postgres)])
