"""Fixtures for portfolio tests (default rules, an empty ledger)."""

from __future__ import annotations

import pytest

from portfolio import Ledger, Rules


@pytest.fixture
def rules() -> Rules:
    return Rules()


@pytest.fixture
def ledger(rules: Rules) -> Ledger:
    return Ledger(rules, "agent-1")
