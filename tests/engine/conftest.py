"""Fixtures of the engine's tests: every backend test runs on both PostgreSQL write paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.storage_backends import backend

__all__ = ["backend"]


@pytest.fixture
def offline_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No OpenRouter key (so `arena demo` adds no hosted LLM) and a home of the test's own, where
    the demo writes its report; returns that home."""
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("ARENA_HOME", str(home))
    return home
